"""Snapshots of the worktree in a shadow git repository, so every file change of a turn can
be undone and redone, whatever made it (write and edit tools, shell commands, plugins).

The shadow repository lives outside the worktree (``store_dir``, by default under the user
data folder, one per worktree) and is used with ``GIT_DIR``/``GIT_WORK_TREE`` and its own
index, which keeps the files' stat data between snapshots: an incremental snapshot hashes
only what changed. A snapshot is only a tree id; nothing refers to it but the caller, so
the shadow's config turns automatic gc off (``gc.auto=0``) and no tree is ever pruned.
The user's repository is never written: no command here runs with its ``.git`` as the
repository except one read-only listing (below), with optional locks and fsmonitor off.
Every git here runs with safe_git's config and environment (no fsmonitor, hook, driver,
pager, editor or transport, whatever the user's or a nested repository's config says),
and git itself is never taken from a PATH folder inside the worktree.

Decisions:

- **What a snapshot holds**: what ``git status`` would show: files not ignored, plus files
  the user's own index tracks although an ignore rule matches them (``git ls-files -ci``
  against the user's repository, read only). Ignore rules: the worktree's ``.gitignore``
  files; the user's ``.git/info/exclude`` (copied into the shadow's ``info/exclude`` before
  each snapshot; a linked worktree's ``.git`` file is followed to the common folder); and
  the user's ``core.excludesFile`` as their git resolves it in the worktree (global,
  system or repository config; unset means git's default ``~/.config/git/ignore``), as git
  status would. ``.gitignore`` files of folders above the worktree do not apply: pass the
  git root (``Workspace.worktree``). Apart from that excludes file, the user's global and
  system git config are not read (``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_CONFIG_NOSYSTEM``):
  no filter (git-lfs), hook, fsmonitor, autocrlf, external diff or colour of theirs runs.
- **Bytes as they are**: the shadow's ``info/attributes`` unsets ``text``, ``eol``,
  ``filter``, ``ident`` and ``working-tree-encoding`` for every path, so a worktree's
  ``.gitattributes`` cannot convert line endings or run filters: a blob holds the file's
  bytes and restore writes them back (restore writes files itself, not via git checkout).
- **Nested repositories** (a folder with its own ``.git``, a submodule, a clone) are
  skipped: their files are not snapshotted and never become a gitlink entry. Their own
  history covers them, and a cloned dependency can be huge. Files the shadow index held
  before the folder became a repository stay tracked, as git itself would keep them.
- **Symlinks** are stored as symlinks (the target text) and restored as symlinks. Restore
  refuses to write or delete through a symlinked folder, unless that symlink is itself one
  of the paths it restores (it is replaced first).
- **Big files** (over ``max_file_bytes``) are found by ``lstat`` before anything is hashed,
  kept out of the shadow index and listed in ``Snapshot.skipped``. A file that grew past
  the limit leaves the index (``changes`` reports it deleted). Restore deletes only paths
  it is given that are absent from the tree; callers pass paths from ``changes()``, where
  a big file never appears unless it was once small, so an untouched big file is safe.
- **Objects**: more than a few dozen new files in one snapshot are hashed into one pack
  (git's bulk check-in: a first snapshot is ~4x faster than with a loose object per
  file); fewer stay loose objects, so packs stay few. Nothing is ever repacked or pruned.
  A store folder inside the worktree (a session in the home folder) excludes itself.
- **Locking**: every operation holds ``fcntl.flock`` on ``store_dir/lock``, so two sessions
  in one folder (or two threads) never interleave on the shadow index.
- The shadow folder is created ``0700``: it holds copies of the user's files.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import re
import secrets
import stat
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..util import paths as app_paths
from ..util import safe_git

MAX_FILE_BYTES = 10 * 1024 * 1024

_OFF = "checkpoints (/undo, /redo, /rewind) are off"
MISSING_GIT = f"git is not installed (not found on PATH); {_OFF}"

# bump when the shadow's setup changes, so existing stores are set up again
_LAYOUT = "2"
_CONFIG = (
    ("core.bare", "false"),
    ("gc.auto", "0"),
    ("core.compression", "1"),  # zlib's fastest: a first snapshot ~25% faster, a bit bigger
    ("maintenance.auto", "false"),
    ("core.autocrlf", "false"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.attributesFile", os.devnull),
    ("core.logAllRefUpdates", "false"),
    ("commit.gpgsign", "false"),
    ("color.ui", "false"),
    ("diff.renames", "false"),
)
_ATTRIBUTES = "* -text -eol -filter -ident -working-tree-encoding\n"
_TREE_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_STATUS = {"A": "added", "M": "modified", "T": "modified", "D": "deleted"}
_EXEC = 0o111
_BULK = 64


@dataclass(frozen=True)
class Snapshot:
    """``tree``: the git tree id of the worktree's state (keep it: nothing else does);
    ``skipped``: posix paths left out because they were larger than ``max_file_bytes``."""

    tree: str
    skipped: tuple[str, ...]


@dataclass(frozen=True)
class Change:
    """``path`` (posix, relative to the worktree) is ``"added"``, ``"modified"`` (content,
    exec bit or kind) or ``"deleted"`` going from tree a to tree b."""

    path: str
    status: str


class CheckpointError(Exception):
    """A checkpoint operation failed; the message says what failed and what to do."""


def default_store_dir(worktree: Path) -> Path:
    """One shadow repository per worktree, named by a hash of its resolved path."""
    digest = hashlib.sha256(os.fsencode(worktree.resolve())).hexdigest()[:16]
    return app_paths.user_data_dir() / "checkpoints" / digest


class CheckpointStore:
    """Snapshots of ``worktree`` as git trees in a shadow repository at ``store_dir``.

    The async methods run the blocking ones in a thread; the ``*_sync`` ones are for the
    CLI and threads."""

    def __init__(
        self,
        worktree: Path,
        store_dir: Path | None = None,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.worktree = Path(worktree).resolve()
        folder = Path(store_dir) if store_dir is not None else default_store_dir(self.worktree)
        self.store_dir = folder.resolve()  # git runs in the worktree: no relative GIT_DIR
        self.max_file_bytes = max_file_bytes
        self._git = safe_git.executable("git", self.worktree)  # never from the worktree
        self._reason: str | None = None if self._git else MISSING_GIT
        self._ready = False
        self._excludes_file: str | None = None

    # -- availability ----------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """git is found and runs (checked once, on first use)."""
        return self.reason == ""

    @property
    def reason(self) -> str:
        """Why checkpoints are off; empty when they work."""
        if self._reason is None:
            self._reason = self._probe()
        return self._reason

    def _probe(self) -> str:
        """A ``git`` on PATH may still not run (macOS ships a stub asking to install tools)."""
        assert self._git is not None
        try:
            done = subprocess.run(
                [self._git, "--version"],
                capture_output=True,
                env=_plain_env(self.worktree),
                check=False,
            )
        except OSError as exc:
            return f"git at {self._git} does not run ({exc}); {_OFF}"
        if done.returncode != 0 or not done.stdout.startswith(b"git version"):
            why = _tail(done.stderr) or "no version"
            return f"git at {self._git} does not run ({why}); {_OFF}"
        return ""

    # -- the async API ---------------------------------------------------------------------

    async def snapshot(self) -> Snapshot:
        return await asyncio.to_thread(self.snapshot_sync)

    async def changes(self, a: str, b: str) -> list[Change]:
        return await asyncio.to_thread(self.changes_sync, a, b)

    async def diff(self, a: str, b: str, paths: Sequence[str] | None = None) -> str:
        return await asyncio.to_thread(self.diff_sync, a, b, paths)

    async def restore(self, tree: str, paths: Sequence[str]) -> None:
        await asyncio.to_thread(self.restore_sync, tree, paths)

    async def files(self, tree: str) -> dict[str, str]:
        return await asyncio.to_thread(self.files_sync, tree)

    # -- snapshot --------------------------------------------------------------------------

    def snapshot_sync(self) -> Snapshot:
        """Record the worktree as a tree; big files are left out and listed."""
        with self._locked():
            self._sync_excludes()
            listed = self._shadow("ls-files", "-z", "--others", "--modified", "--exclude-standard")
            candidates = {p for p in _split(listed) if not p.endswith("/")}  # "x/": a repo
            candidates.update(self._tracked_but_ignored())
            add, drop, skipped = self._sort(candidates)
            if drop:
                self._shadow("update-index", "--force-remove", "-z", "--stdin", stdin=_nul(drop))
            if add:
                # many new files go into one pack, not one loose object file each (a first
                # snapshot of 10,000 files: ~4x faster); a few stay loose, so packs stay few
                bulk = ["-c", "core.bigFileThreshold=1"] if len(add) > _BULK else []
                self._shadow(
                    "update-index", "--add", "--remove", "--replace", "-z", "--stdin",
                    stdin=_nul(add), options=bulk,
                )  # fmt: skip
            tree = self._shadow("write-tree").decode().strip()
            return Snapshot(tree=tree, skipped=tuple(sorted(skipped)))

    def _sort(self, candidates: set[str]) -> tuple[list[str], list[str], list[str]]:
        """Split candidates into paths to add or update (missing ones are removed by
        ``update-index --remove``), paths to drop from the index (folders, big and special
        files, paths beyond a symlink) and the big files."""
        add: list[str] = []
        drop: list[str] = []
        skipped: list[str] = []
        links: dict[str, bool] = {}
        root = str(self.worktree)
        for rel in sorted(candidates):
            if _beyond_symlink(root, rel, links):
                drop.append(rel)
                continue
            try:
                info = os.lstat(os.path.join(root, rel))
            except (FileNotFoundError, NotADirectoryError):
                add.append(rel)
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                skipped.append(rel)
                drop.append(rel)
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                add.append(rel)
            else:
                drop.append(rel)
        return add, drop, skipped

    def _tracked_but_ignored(self) -> list[str]:
        """Files the user's index tracks although an ignore rule matches them: git status
        shows them, so a snapshot holds them. Read only; best effort."""
        git_dir = _user_git_dir(self.worktree)
        if git_dir is None:
            return []
        env = _plain_env(self.worktree)
        env.update(
            GIT_DIR=str(git_dir),
            GIT_WORK_TREE=str(self.worktree),
            GIT_OPTIONAL_LOCKS="0",
        )
        args = ["ls-files", "-z", "-c", "-i", "--exclude-standard"]
        done = self._call(args, env=env)
        return _split(done.stdout) if done.returncode == 0 else []

    def _sync_excludes(self) -> None:
        """The shadow's info/exclude: the user's ``.git/info/exclude`` and, when the store
        lives inside the worktree, the store itself."""
        text = ""
        git_dir = _user_git_dir(self.worktree)
        if git_dir is not None:
            try:
                text = (_common_dir(git_dir) / "info" / "exclude").read_text(errors="replace")
            except OSError:
                text = ""
        try:
            inside = self.store_dir.resolve().relative_to(self.worktree)
        except ValueError:
            inside = None
        if inside is not None and inside.parts:
            text += f"\n# the checkpoint store\n/{_escape_pattern(inside.as_posix())}/\n"
        target = self.store_dir / "info" / "exclude"
        try:
            current = target.read_text(errors="replace")
        except OSError:
            current = None
        if current != text:
            target.write_text(text)

    # -- reading trees ---------------------------------------------------------------------

    def changes_sync(self, a: str, b: str) -> list[Change]:
        """What differs from tree ``a`` to tree ``b``, by path (an exec bit counts)."""
        with self._locked():
            out = self._shadow(
                "diff-tree", "-r", "-z", "--no-renames", "--name-status", _tree(a), _tree(b)
            )
        fields = _split(out)
        found = [
            Change(path=path, status=_STATUS.get(code[:1], "modified"))
            for code, path in zip(fields[::2], fields[1::2], strict=True)
        ]
        return sorted(found, key=lambda change: change.path)

    def diff_sync(self, a: str, b: str, paths: Sequence[str] | None = None) -> str:
        """``git diff a b`` as text; binary files say ``Binary files … differ``."""
        if paths is not None and not paths:
            return ""
        args = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            _tree(a),
            _tree(b),
            "--",
            *[_relative(p) for p in paths or ()],
        ]
        with self._locked():
            out = self._shadow(*args)
        return out.decode("utf-8", errors="replace")

    def files_sync(self, tree: str) -> dict[str, str]:
        """Every file of ``tree``: path -> blob id."""
        with self._locked():
            return {path: blob for path, (_mode, blob) in self._entries(tree).items()}

    def _entries(self, tree: str) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id) for every file of ``tree``."""
        out = self._shadow("ls-tree", "-r", "-z", "--full-tree", _tree(tree))
        entries: dict[str, tuple[str, str]] = {}
        for line in _split(out):
            meta, _, path = line.partition("\t")
            mode, _kind, blob = meta.split(" ")
            entries[path] = (mode, blob)
        return entries

    def _blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The content of each blob, read in one ``git cat-file --batch``."""
        unique = sorted(set(ids))
        if not unique:
            return {}
        out = self._shadow("cat-file", "--batch", stdin="".join(f"{i}\n" for i in unique).encode())
        found: dict[str, bytes] = {}
        at = 0
        for blob in unique:
            end = out.index(b"\n", at)
            header = out[at:end].decode().split(" ")
            if len(header) != 3:
                raise CheckpointError(f"checkpoints: blob {blob} is missing from {self.store_dir}")
            size = int(header[2])
            found[blob] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found

    # -- restore ---------------------------------------------------------------------------

    def restore_sync(self, tree: str, paths: Sequence[str]) -> None:
        """Make each path exactly as in ``tree`` (content, exec bit, symlink); a path absent
        from ``tree`` is deleted, then folders left empty by that. Only the given paths are
        touched: pass paths from ``changes()``."""
        wanted = list(dict.fromkeys(_relative(p) for p in paths))
        if not wanted:
            return
        with self._locked():
            entries = self._entries(tree)
            keep = {p: entries[p] for p in wanted if p in entries}
            gone = [p for p in wanted if p not in entries]
            self._refuse_symlinked_folders(list(keep), set(gone))
            blobs = self._blobs([blob for _mode, blob in keep.values()])
            failed: list[str] = []
            emptied: set[Path] = set()
            for path in gone:
                try:
                    emptied.add(self._delete(path))
                except OSError as exc:
                    failed.append(f"{path} ({exc.strerror or exc})")
            self._remove_empty(emptied)
            for path, (mode, blob) in keep.items():
                try:
                    self._write(path, mode, blobs[blob])
                except OSError as exc:
                    failed.append(f"{path} ({exc.strerror or exc})")
            if failed:
                raise CheckpointError(
                    f"checkpoints: could not restore {', '.join(failed)}; "
                    "the other files were restored"
                )

    def _refuse_symlinked_folders(self, written: list[str], deleted: set[str]) -> None:
        """Writing ``a/b`` where ``a`` is a symlink would land outside the worktree, unless
        the symlink ``a`` is deleted first."""
        for rel in written:
            parts = rel.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                folder = "/".join(parts[:depth])
                if folder not in deleted and os.path.islink(self.worktree / folder):
                    raise CheckpointError(
                        f"checkpoints: not restoring {rel}: {folder} is now a symlink; "
                        "nothing was changed"
                    )

    def _delete(self, rel: str) -> Path:
        """Remove a file or symlink (a folder is left alone: its files are paths of their
        own; a path beyond a symlink is not in the worktree); returns its folder."""
        target = self.worktree / rel
        if _beyond_symlink(str(self.worktree), rel, {}):
            return target.parent
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            target.unlink()
        return target.parent

    def _remove_empty(self, folders: set[Path]) -> None:
        """Remove folders left empty, deepest first, up to (never including) the worktree."""
        for folder in sorted(folders, key=lambda f: len(f.parts), reverse=True):
            current = folder
            while current != self.worktree and self.worktree in current.parents:
                try:
                    current.rmdir()
                except OSError:
                    break
                current = current.parent

    def _write(self, rel: str, mode: str, data: bytes) -> None:
        """Replace ``rel`` by a temporary file (or symlink) renamed over it."""
        target = self.worktree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir() and not target.is_symlink():
            target.rmdir()  # empty after the deletions, or an OSError says it is in the way
        temp = target.parent / f".{target.name}.tui-agent-{secrets.token_hex(4)}"
        if mode == "120000":
            os.symlink(os.fsdecode(data), temp)
        else:
            try:
                before: int | None = os.lstat(target).st_mode
            except OSError:
                before = None
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                    base = before if before is not None and stat.S_ISREG(before) else None
                    if base is None:
                        base = os.fstat(handle.fileno()).st_mode
                    bits = stat.S_IMODE(base)
                    if mode == "100755":
                        bits |= (bits & 0o444) >> 2
                    else:
                        bits &= ~_EXEC
                    os.fchmod(handle.fileno(), bits)
            except BaseException:
                temp.unlink(missing_ok=True)
                raise
        try:
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    # -- the shadow repository -------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """One operation at a time per store folder, across threads and processes."""
        if self.reason:
            raise CheckpointError(self.reason)
        if not self.worktree.is_dir():
            raise CheckpointError(f"checkpoints: the folder {self.worktree} does not exist")
        try:
            self.store_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = open(self.store_dir / "lock", "ab")  # closed by the with below
        except OSError as exc:
            raise CheckpointError(
                f"checkpoints: cannot use {self.store_dir} ({exc.strerror or exc}); "
                "check that the folder is writable"
            ) from exc
        with handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                self._set_up()
                yield
            except OSError as exc:
                raise CheckpointError(
                    f"checkpoints: {exc.strerror or exc} ({exc.filename or self.store_dir})"
                ) from exc
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _set_up(self) -> None:
        """Create the shadow repository and its config once (again when ``_LAYOUT`` moves)."""
        if self._ready:
            return
        marker = self.store_dir / "tui-agent-layout"
        if not (marker.is_file() and marker.read_text().strip() == _LAYOUT):
            if not (self.store_dir / "HEAD").is_file():
                done = self._call(
                    ["init", "--quiet", "--bare", "--template=", str(self.store_dir)],
                    env=_plain_env(self.worktree),
                )
                if done.returncode != 0:
                    raise CheckpointError(
                        f"checkpoints: cannot create {self.store_dir}: {_tail(done.stderr)}"
                    )
            for key, value in _CONFIG:
                self._shadow("config", key, value)
            (self.store_dir / "info").mkdir(exist_ok=True)
            (self.store_dir / "info" / "attributes").write_text(_ATTRIBUTES)
            (self.store_dir / "worktree").write_text(f"{self.worktree}\n")
            marker.write_text(_LAYOUT + "\n")
        if self._excludes_file is None:
            self._excludes_file = self._user_excludes_file()
        self._ready = True

    def _user_excludes_file(self) -> str:
        """``core.excludesFile`` as the user's git resolves it in the worktree, or ""."""
        env = _plain_env(self.worktree)
        env["GIT_OPTIONAL_LOCKS"] = "0"
        done = self._call(
            ["config", "--path", "--get", "core.excludesFile"], env=env, cwd=self.worktree
        )
        return os.fsdecode(done.stdout.strip()) if done.returncode == 0 else ""

    def _shadow(self, *args: str, stdin: bytes | None = None, options: Sequence[str] = ()) -> bytes:
        """Run git on the shadow repository; a failure raises with git's last words."""
        env = _plain_env(self.worktree)
        env.update(
            GIT_DIR=str(self.store_dir),
            GIT_WORK_TREE=str(self.worktree),
            GIT_INDEX_FILE=str(self.store_dir / "index"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_ATTR_NOSYSTEM="1",
            GIT_LITERAL_PATHSPECS="1",
        )
        full = [*options, *args]
        if self._excludes_file:
            full = ["-c", f"core.excludesFile={self._excludes_file}", *full]
        done = self._call(full, env=env, stdin=stdin, cwd=self.worktree)
        if done.returncode != 0:
            raise CheckpointError(
                f"checkpoints: git {args[0]} failed (exit {done.returncode}): "
                f"{_tail(done.stderr) or 'no message'}. The shadow repository is "
                f"{self.store_dir}; removing it resets the checkpoints."
            )
        return done.stdout

    def _call(
        self,
        args: list[str],
        *,
        env: dict[str, str],
        stdin: bytes | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        assert self._git is not None
        try:
            return subprocess.run(
                safe_git.argv(self._git, *args),
                input=stdin,
                capture_output=True,
                env=env,
                cwd=cwd,
                check=False,
            )
        except OSError as exc:
            raise CheckpointError(f"checkpoints: could not run git ({exc})") from exc


def _plain_env(worktree: Path) -> dict[str, str]:
    """The environment without any inherited ``GIT_*`` variable (a calling git hook sets
    GIT_DIR, GIT_INDEX_FILE or GIT_WORK_TREE, which would point our commands at the user's
    repo), with safe_git's: no prompt, pager, editor or transport, no PATH folder inside
    the worktree."""
    return safe_git.environment(near=worktree, LC_ALL="C")


def _user_git_dir(worktree: Path) -> Path | None:
    """The user's git folder for ``worktree``: ``.git``, or where a ``.git`` file points."""
    dot = worktree / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            text = dot.read_text(errors="replace").strip()
        except OSError:
            return None
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            target = target if target.is_absolute() else worktree / target
            return target if target.is_dir() else None
    return None


def _common_dir(git_dir: Path) -> Path:
    """A linked worktree's git folder shares ``info/`` with the main one (``commondir``)."""
    try:
        common = Path((git_dir / "commondir").read_text().strip())
    except OSError:
        return git_dir
    return common if common.is_absolute() else git_dir / common


def _beyond_symlink(root: str, rel: str, cache: dict[str, bool]) -> bool:
    """A folder of ``rel`` is a symlink: git refuses such a path (and so do we)."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        folder = "/".join(parts[:depth])
        if folder not in cache:
            cache[folder] = os.path.islink(os.path.join(root, folder))
        if cache[folder]:
            return True
    return False


def _relative(path: str) -> str:
    """A caller's path as git spells it; never absolute, never ``..``, never in ``.git``."""
    rel = path.replace(os.sep, "/")
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or parts[0] == ".git" or "" in parts:
        raise CheckpointError(f"checkpoints: {path!r} is not a path inside the worktree")
    return rel


def _tree(value: str) -> str:
    if not _TREE_ID.fullmatch(value):
        raise CheckpointError(f"checkpoints: {value!r} is not a tree id")
    return value


def _nul(paths: list[str]) -> bytes:
    return b"".join(os.fsencode(path) + b"\0" for path in paths)


def _split(out: bytes) -> list[str]:
    return [os.fsdecode(part) for part in out.split(b"\0") if part]


def _escape_pattern(text: str) -> str:
    return re.sub(r"([*?\[\\!#])", r"\\\1", text)


def _tail(stderr: bytes, lines: int = 3) -> str:
    text = stderr.decode("utf-8", errors="replace").strip().splitlines()
    return " / ".join(text[-lines:])
