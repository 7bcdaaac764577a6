"""CheckpointStore (issue 16): snapshots of a worktree in a shadow git repository, with real
git and real files; the user's own repository must come out of every operation untouched."""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import subprocess
from pathlib import Path

import pytest

from tui_agent.core.checkpoints.store import (
    MISSING_GIT,
    Change,
    CheckpointError,
    CheckpointStore,
    Snapshot,
)
from tui_agent.core.util import paths

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def git(repo: Path, *args: str) -> str:
    """The user's git, as the user would run it (no GIT_* variables of the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def state(root: Path) -> dict[str, tuple[str, bytes, bool]]:
    """Everything in the worktree but .git: files (bytes, exec bit), symlinks, folders."""
    found: dict[str, tuple[str, bytes, bool]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if here == root and ".git" in dirs:
            dirs.remove(".git")
        for name in dirs + files:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode(), False)
            elif path.is_dir():
                found[rel] = ("dir", b"", False)
            else:
                found[rel] = ("file", path.read_bytes(), os.access(path, os.X_OK))
    return found


def fingerprint(git_dir: Path) -> list[tuple[str, int, int, str]]:
    """Every file and folder of a .git: path, size, mtime (ns) and sha256."""
    rows = []
    for path in sorted(git_dir.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            digest = "dir"
        info = path.lstat()
        rows.append((path.relative_to(git_dir).as_posix(), info.st_size, info.st_mtime_ns, digest))
    return rows


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def make_repo(root: Path) -> Path:
    """A realistic repository: committed files, an ignore file, a stash, local changes."""
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("# demo\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    (root / "README.md").write_text("# demo, stashed\n")
    git(root, "stash", "-q")
    (root / "README.md").write_text("# demo, edited\n")
    (root / "notes.txt").write_text("untracked\n")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def store_for(worktree: Path, tmp_path: Path, **kwargs: int) -> CheckpointStore:
    return CheckpointStore(worktree, tmp_path / "store", **kwargs)


def fill(root: Path) -> None:
    rng = random.Random(16)
    (root / "text.txt").write_text("one\ntwo\nthree\n")
    (root / "data.bin").write_bytes(bytes(rng.randrange(256) for _ in range(3000)) + b"\0\0")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "sub" / "deep.py").write_text("x = 1\n")
    (root / "pkg" / "old_name.py").write_text("y = 2\n")
    (root / "link").symlink_to("text.txt")
    (root / "dirlink").symlink_to("pkg")


def churn(root: Path) -> None:
    """Writes, edits, deletes, a rename, new nested folders, exec bits, symlinks, binary."""
    rng = random.Random(61)
    (root / "text.txt").write_text("one\n2\nthree\nfour\n")
    (root / "data.bin").write_bytes(b"\0" + bytes(rng.randrange(256) for _ in range(5000)))
    (root / "run.sh").chmod(0o644)
    (root / "text.txt").chmod(0o755)
    (root / "pkg" / "sub" / "deep.py").unlink()
    (root / "pkg" / "sub").rmdir()  # git keeps no empty folders: rm -r
    (root / "pkg" / "old_name.py").rename(root / "pkg" / "new_name.py")
    (root / "fresh" / "a" / "b").mkdir(parents=True)
    (root / "fresh" / "a" / "b" / "c.txt").write_text("new\n")
    (root / "link").unlink()
    (root / "link").symlink_to("run.sh")
    (root / "dirlink").unlink()
    (root / "dirlink").write_text("now a file\n")
    (root / "fresh_link").symlink_to("fresh/a")


# -- round trips ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["git", "plain"])
async def test_restore_goes_back_and_forth_byte_for_byte(
    kind: str, tmp_path: Path, repo: Path
) -> None:
    root = repo if kind == "git" else tmp_path / "plain"
    root.mkdir(exist_ok=True)
    fill(root)
    store = store_for(root, tmp_path)
    before = state(root)
    first = await store.snapshot()
    churn(root)
    after = state(root)
    assert after != before
    second = await store.snapshot()

    changes = await store.changes(first.tree, second.tree)
    await store.restore(first.tree, [c.path for c in changes])
    assert state(root) == before  # the emptied "fresh/a/b" folders are gone too
    assert (await store.snapshot()).tree == first.tree

    await store.restore(second.tree, [c.path for c in changes])
    assert state(root) == after
    assert (await store.snapshot()).tree == second.tree


async def test_a_snapshot_holds_untracked_files_and_the_bytes_as_they_are(
    tmp_path: Path, repo: Path
) -> None:
    (repo / ".gitattributes").write_text("* text eol=crlf\n*.dat filter=shout\n")
    (repo / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (repo / "lf.txt").write_bytes(b"a\nb\n")
    (repo / "x.dat").write_bytes(b"quiet\n")
    git(repo, "config", "filter.shout.clean", "tr a-z A-Z")
    store = store_for(repo, tmp_path)
    files = store.files_sync(store.snapshot_sync().tree)
    assert sorted(files) == [
        ".gitattributes",
        ".gitignore",
        "README.md",
        "crlf.txt",
        "lf.txt",
        "notes.txt",
        "src/app.py",
        "x.dat",
    ]
    for path, blob in files.items():
        assert blob == blob_id((repo / path).read_bytes()), path


async def test_many_new_files_at_once_are_stored_as_they_are(tmp_path: Path) -> None:
    """Over a few dozen new files, the store hashes them into one pack: same blobs."""
    root = tmp_path / "many"
    rng = random.Random(3)
    for n in range(150):
        path = root / f"d{n % 7}" / f"f{n}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(rng.randrange(256) for _ in range(n * 13)))
    (root / "d3" / "f3.txt").write_text("a\r\nb\r\n")
    (root / ".gitattributes").write_text("* text eol=crlf\n")
    store = store_for(root, tmp_path)
    first = store.snapshot_sync()
    files = store.files_sync(first.tree)
    assert len(files) == 151
    for path, blob in files.items():
        assert blob == blob_id((root / path).read_bytes()), path
    assert list((tmp_path / "store" / "objects" / "pack").glob("*.pack"))
    (root / "d3" / "f3.txt").write_bytes(b"changed")
    second = store.snapshot_sync()
    assert store.files_sync(second.tree)["d3/f3.txt"] == blob_id(b"changed")


async def test_ignored_files_are_neither_stored_nor_touched(tmp_path: Path, repo: Path) -> None:
    (repo / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (repo / "secret.txt").write_text("s1\n")
    (repo / "debug.log").write_text("l1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("o1\n")
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    stored = store.files_sync(first.tree)
    assert not {"secret.txt", "debug.log", "build/out.o"} & set(stored)

    (repo / "secret.txt").write_text("s2\n")
    (repo / "debug.log").unlink()
    (repo / "build" / "out.o").write_text("o2\n")
    (repo / "build" / "more.o").write_text("m\n")
    (repo / "src" / "app.py").write_text("print('changed')\n")
    second = store.snapshot_sync()
    changes = store.changes_sync(first.tree, second.tree)
    assert changes == [Change("src/app.py", "modified")]
    store.restore_sync(first.tree, [c.path for c in changes])
    assert (repo / "src" / "app.py").read_text() == "print('hello')\n"
    assert (repo / "secret.txt").read_text() == "s2\n"
    assert not (repo / "debug.log").exists()
    assert sorted(p.name for p in (repo / "build").iterdir()) == ["more.o", "out.o"]


@pytest.mark.parametrize("where", ["core.excludesFile", "xdg default"])
async def test_the_users_global_excludes_are_honoured(
    where: str, tmp_path: Path, repo: Path
) -> None:
    home = Path(os.environ["HOME"])
    if where == "core.excludesFile":
        (home / "my-ignore").write_text("*.secret\n")
        (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignore\n")
    else:
        ignore = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "ignore"
        ignore.parent.mkdir(parents=True)
        ignore.write_text("*.secret\n")
    (repo / "key.secret").write_text("k\n")
    assert "key.secret" not in git(repo, "status", "--porcelain")
    store = store_for(repo, tmp_path)
    assert "key.secret" not in store.files_sync(store.snapshot_sync().tree)


async def test_files_the_users_repo_tracks_despite_an_ignore_rule_are_stored(
    tmp_path: Path, repo: Path
) -> None:
    (repo / "keep.log").write_text("kept\n")
    (repo / "drop.log").write_text("dropped\n")
    git(repo, "add", "-f", "keep.log")
    store = store_for(repo, tmp_path)
    files = store.files_sync(store.snapshot_sync().tree)
    assert "keep.log" in files
    assert "drop.log" not in files


async def test_the_git_folder_and_nested_repositories_are_not_stored(
    tmp_path: Path, repo: Path
) -> None:
    (repo / "vendor").mkdir()
    (repo / "vendor" / "tool").write_text("a file, for now\n")
    store = store_for(repo, tmp_path)
    assert "vendor/tool" in store.files_sync(store.snapshot_sync().tree)
    (repo / "vendor" / "tool").unlink()
    for name in ("lib", "tool"):  # a new folder, and one where a stored file was
        nested = repo / "vendor" / name
        nested.mkdir()
        git(nested, "init", "-q")
        (nested / "lib.py").write_text("z = 3\n")
        git(nested, "add", "-A")
        git(nested, "commit", "-qm", "lib")
    (repo / "vendor" / "plain.txt").write_text("p\n")
    tree = store.snapshot_sync().tree
    files = store.files_sync(tree)
    assert "vendor/plain.txt" in files
    assert not [p for p in files if p.startswith((".git/", "vendor/lib", "vendor/tool"))]
    listing = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "store"), "ls-tree", "-r", tree],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert " commit " not in listing  # no gitlink
    assert "vendor/plain.txt" in listing


async def test_a_store_inside_the_worktree_does_not_store_itself(tmp_path: Path) -> None:
    root = tmp_path / "home-like"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    store = CheckpointStore(root, root / ".local" / "checkpoints" / "x")
    store.snapshot_sync()
    (root / "b.txt").write_text("b\n")
    assert sorted(store.files_sync(store.snapshot_sync().tree)) == ["a.txt", "b.txt"]


# -- big files --------------------------------------------------------------------------------


async def test_big_files_are_skipped_and_never_deleted_by_restore(
    tmp_path: Path, repo: Path
) -> None:
    store = store_for(repo, tmp_path, max_file_bytes=1000)
    (repo / "grows.txt").write_text("small\n")
    first = store.snapshot_sync()
    assert first.skipped == ()
    assert "grows.txt" in store.files_sync(first.tree)

    (repo / "huge.bin").write_bytes(b"\0" * 5000)
    (repo / "grows.txt").write_text("big\n" * 500)
    (repo / "src" / "app.py").write_text("print('edited')\n")
    second = store.snapshot_sync()
    assert second.skipped == ("grows.txt", "huge.bin")
    assert not {"grows.txt", "huge.bin"} & set(store.files_sync(second.tree))
    changes = store.changes_sync(first.tree, second.tree)
    assert changes == [Change("grows.txt", "deleted"), Change("src/app.py", "modified")]

    store.restore_sync(first.tree, [c.path for c in changes])
    assert (repo / "huge.bin").read_bytes() == b"\0" * 5000
    assert (repo / "grows.txt").read_text() == "small\n"
    assert (repo / "src" / "app.py").read_text() == "print('hello')\n"


# -- changes and diff -------------------------------------------------------------------------


async def test_changes_lists_added_modified_and_deleted_by_path(tmp_path: Path, repo: Path) -> None:
    fill(repo)
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    assert store.changes_sync(first.tree, first.tree) == []
    churn(repo)
    second = store.snapshot_sync()
    assert await store.changes(first.tree, second.tree) == [
        Change("data.bin", "modified"),
        Change("dirlink", "modified"),  # a symlink became a file
        Change("fresh/a/b/c.txt", "added"),
        Change("fresh_link", "added"),
        Change("link", "modified"),
        Change("pkg/new_name.py", "added"),
        Change("pkg/old_name.py", "deleted"),
        Change("pkg/sub/deep.py", "deleted"),
        Change("run.sh", "modified"),  # only its exec bit
        Change("text.txt", "modified"),
    ]


async def test_diff_shows_text_changes_and_names_binary_ones(tmp_path: Path, repo: Path) -> None:
    # the user's global git config does not shape the diff
    global_config = "[core]\n\tbigFileThreshold = 10\n[diff]\n\tcontext = 0\n\tnoprefix = true\n"
    (Path(os.environ["HOME"]) / ".gitconfig").write_text(global_config + "[color]\n\tui = always\n")
    fill(repo)
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    churn(repo)
    second = store.snapshot_sync()
    text = await store.diff(first.tree, second.tree, ["text.txt"])
    assert text.startswith("diff --git a/text.txt b/text.txt\n")
    assert " one\n-two\n+2\n" in text
    assert "+four\n" in text
    assert "data.bin" not in text
    binary = store.diff_sync(first.tree, second.tree, ["data.bin"])
    assert "Binary files a/data.bin and b/data.bin differ" in binary
    everything = store.diff_sync(first.tree, second.tree)
    assert "a/pkg/sub/deep.py" in everything
    assert "text.txt" in everything
    assert store.diff_sync(first.tree, second.tree, []) == ""


# -- safety -----------------------------------------------------------------------------------


async def test_the_users_repository_is_untouched(tmp_path: Path, repo: Path) -> None:
    fill(repo)
    git(repo, "add", "text.txt")  # something staged, so the index matters
    dot_git = repo / ".git"
    before = fingerprint(dot_git)
    porcelain = git(repo, "status", "--porcelain")
    fingerprint_after_status = fingerprint(dot_git)  # status may refresh the index itself
    stash, head = git(repo, "stash", "list"), git(repo, "rev-parse", "HEAD")
    index = (dot_git / "index").read_bytes()
    before = fingerprint_after_status

    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    churn(repo)
    second = await store.snapshot()
    changes = await store.changes(first.tree, second.tree)
    await store.diff(first.tree, second.tree)
    await store.files(second.tree)
    await store.restore(first.tree, [c.path for c in changes])
    await store.snapshot()

    assert fingerprint(dot_git) == before
    assert (dot_git / "index").read_bytes() == index
    assert git(repo, "stash", "list") == stash
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == porcelain


async def test_inherited_git_variables_do_not_redirect_anything(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "status", "--porcelain")
    before = fingerprint(repo / ".git")
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / ".git" / "objects"))
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    (repo / "src" / "app.py").write_text("print('edited')\n")
    second = store.snapshot_sync()
    store.restore_sync(first.tree, ["src/app.py"])
    assert store.changes_sync(first.tree, second.tree) == [Change("src/app.py", "modified")]
    assert (tmp_path / "store" / "index").is_file()
    assert fingerprint(repo / ".git") == before


async def test_restore_refuses_paths_outside_the_worktree(tmp_path: Path, repo: Path) -> None:
    store = store_for(repo, tmp_path)
    tree = store.snapshot_sync().tree
    for bad in ["../outside.txt", "/etc/passwd", ".git/config", "a//b", ""]:
        with pytest.raises(CheckpointError, match="not a path inside the worktree"):
            store.restore_sync(tree, [bad])
    with pytest.raises(CheckpointError, match="not a tree id"):
        store.restore_sync("--output=/tmp/x", ["README.md"])


async def test_restore_does_what_it_can_and_names_what_it_could_not(
    tmp_path: Path, repo: Path
) -> None:
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    (repo / "README.md").write_text("edited\n")
    (repo / "src" / "app.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").write_text("a file where the folder was\n")
    with pytest.raises(CheckpointError, match=r"could not restore src/app\.py \(.*\); the other"):
        store.restore_sync(first.tree, ["README.md", "src/app.py"])
    assert (repo / "README.md").read_text() == "# demo, edited\n"
    assert (repo / "src").read_text() == "a file where the folder was\n"


async def test_restore_never_writes_through_a_symlinked_folder(tmp_path: Path, repo: Path) -> None:
    store = store_for(repo, tmp_path)
    first = store.snapshot_sync()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("outside\n")
    (repo / "src" / "app.py").unlink()
    (repo / "src").rmdir()
    (repo / "src").symlink_to(outside)
    second = store.snapshot_sync()

    with pytest.raises(CheckpointError, match="src is now a symlink"):
        store.restore_sync(first.tree, ["src/app.py"])
    assert (outside / "app.py").read_text() == "outside\n"

    changes = store.changes_sync(first.tree, second.tree)
    assert [c.path for c in changes] == ["src", "src/app.py"]
    store.restore_sync(first.tree, [c.path for c in changes])
    assert not (repo / "src").is_symlink()
    assert (repo / "src" / "app.py").read_text() == "print('hello')\n"
    assert (outside / "app.py").read_text() == "outside\n"


# -- concurrency, the default folder ----------------------------------------------------------


async def test_two_stores_on_one_worktree_snapshot_at_once(repo: Path) -> None:
    fill(repo)
    one, two = CheckpointStore(repo), CheckpointStore(repo)
    assert one.store_dir == two.store_dir
    assert one.store_dir.parent == paths.user_data_dir() / "checkpoints"
    first: list[Snapshot] = await asyncio.gather(
        one.snapshot(), two.snapshot(), one.snapshot(), two.snapshot()
    )
    assert len({s.tree for s in first}) == 1
    churn(repo)
    second: list[Snapshot] = await asyncio.gather(
        two.snapshot(), one.snapshot(), two.snapshot(), one.snapshot()
    )
    assert len({s.tree for s in second}) == 1
    files = await one.files(second[0].tree)
    assert {p: b for p, b in files.items() if p != "fresh_link"} == {
        p: blob_id((repo / p).read_bytes())
        for p in files
        if p not in ("fresh_link", "link")  # symlinks hash their target text
    } | {"link": blob_id(b"run.sh")}
    fsck = subprocess.run(
        ["git", "--git-dir", str(one.store_dir), "fsck", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert fsck.returncode == 0, fsck.stderr


# -- no git -----------------------------------------------------------------------------------


async def test_without_git_the_store_is_off_and_says_why(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    store = store_for(repo, tmp_path)
    assert store.available is False
    assert store.reason == MISSING_GIT
    assert "git is not installed" in store.reason
    tree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    calls = [
        store.snapshot_sync,
        lambda: store.changes_sync(tree, tree),
        lambda: store.diff_sync(tree, tree),
        lambda: store.restore_sync(tree, ["README.md"]),
        lambda: store.files_sync(tree),
    ]
    for call in calls:
        with pytest.raises(CheckpointError, match="git is not installed"):
            call()
    for coroutine in [
        store.snapshot(),
        store.changes(tree, tree),
        store.diff(tree, tree),
        store.restore(tree, ["README.md"]),
        store.files(tree),
    ]:
        with pytest.raises(CheckpointError, match="git is not installed"):
            await coroutine
    assert not (tmp_path / "store").exists()


async def test_a_git_that_does_not_run_turns_the_store_off(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "git").write_text(
        "#!/bin/sh\necho 'xcrun: error: invalid active developer path' >&2\nexit 1\n"
    )
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    store = store_for(repo, tmp_path)
    assert store.available is False
    assert "invalid active developer path" in store.reason
    with pytest.raises(CheckpointError, match="are off"):
        store.snapshot_sync()


async def test_a_git_failure_says_what_git_said(tmp_path: Path, repo: Path) -> None:
    store = store_for(repo, tmp_path)
    store.snapshot_sync()
    with pytest.raises(CheckpointError, match=r"git diff-tree failed .*(bad|not|invalid)"):
        store.changes_sync("0" * 40, "1" * 40)
