"""Git outside the sandbox is hardened (issue 25): every git tui-agent starts itself (the
git engine of grep/glob, the ``@`` file list, checkpoints, the ``git`` tool) runs with
config under which no repository can make it run a program, and the ``git`` tool cannot
read outside the project.

Each test is the attack a prompt-injected model would make with what a sandboxed command
can write (a nested repository and its config, ``.git/commondir``, a ``.git`` file, an
``include.path``, a program in the project's virtualenv), then the tool calls or the
moves of the session that would run it outside the sandbox. Each plants a canary command
(``touch`` a file outside the project) and checks that nothing ran, and that the search,
listing or git command still did its job. Real git everywhere; the sandbox ones use the
real bubblewrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import needs_bwrap, write

from tui_agent import Session, create_session, search
from tui_agent.core.engines.project_files import ProjectFiles

NEEDLE = "needle"
LOOKAROUND = r"needle(?= in)"  # ripgrep cannot say it: grep goes to the git engine
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nCANARY-KEY-b3BlbnNzaC1rZXktdjE\n"


def git(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    done = subprocess.run(
        ["git", *args], cwd=folder, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """Where a planted command leaves its mark: outside the project and HOME."""
    folder = tmp_path / "canary"
    folder.mkdir()
    return folder


def ran(canary: Path) -> list[str]:
    return sorted(p.name for p in canary.iterdir())


def evil(folder: Path, canary: Path, name: str) -> str:
    """A program in ``folder`` (in the project, where a sandboxed command can write) that
    marks the canary with its name: the value an attacker gives a config key."""
    path = write(folder / name, f'#!/bin/sh\ntouch "{canary}/{name}"\nexit 0\n')
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def repo(project: Path) -> Path:
    """The project as a real repository with two commits and a file changed since."""
    shutil.rmtree(project / ".git")
    git(project, "init", "-q", "-b", "main")
    write(project / "a.txt", "a needle in a.txt\n")
    write(project / "notes.md", "no match here\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "first")
    write(project / "a.txt", "a needle in a.txt, twice\n")
    git(project, "commit", "-q", "-am", "second")
    write(project / "a.txt", "a needle in a.txt, changed\n")
    return project


def nested(repo: Path) -> Path:
    """``vendor/``: a repository of its own inside the project (``git init vendor``)."""
    vendor = repo / "vendor"
    vendor.mkdir()
    git(vendor, "init", "-q", "-b", "main")
    write(vendor / "lib.py", "# a needle in vendor\n")
    return vendor


def redirected(repo: Path, tmp_path: Path) -> Path:
    """``.git/commondir`` pointed at a folder of the attacker's with its own config and
    hooks (a copy of the repository's, so git keeps working); returns that folder."""
    common = tmp_path / "elsewhere" / "common"
    shutil.copytree(repo / ".git", common)
    (repo / ".git" / "commondir").write_text(f"{common}\n")
    return common


def append(config: Path, text: str) -> None:
    config.write_text(config.read_text() + text)


@pytest.fixture
def session_of() -> Iterator[Any]:
    made: list[Session] = []

    def make(folder: Path) -> Session:
        made.append(create_session(folder))
        return made[-1]

    yield make
    for session in made:
        session.conversation.journal.close()


async def tool(session: Session, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


async def grep_tool_and_api(session: Session, root: Path) -> search.GrepResult:
    """The grep tool with a pattern ripgrep cannot say (so git's engine runs), then the
    search API with the git engine forced: it raises if git itself failed."""
    found = await tool(session, "grep", {"pattern": LOOKAROUND})
    assert found["ok"] and "vendor/lib.py:1: # a needle in vendor" in found["matches"], found
    result = search.grep(root, LOOKAROUND, engine="git")
    assert result.engine == "git"
    assert [line.path for line in result.lines] == ["a.txt", "vendor/lib.py"], result
    return result


# -- search: a nested repository's config ------------------------------------------------------


async def test_a_nested_repository_with_fsmonitor_runs_nothing_on_grep(
    repo: Path, canary: Path, session_of: Any
) -> None:
    vendor = nested(repo)
    git(vendor, "config", "core.fsmonitor", f"touch {canary}/fsmonitor")
    session = session_of(repo)
    await grep_tool_and_api(session, repo)
    assert search.glob(repo, "**/*.py", engine="git").paths == ["vendor/lib.py"]
    assert "vendor/lib.py" in search.files(repo, engine="git").paths
    assert ran(canary) == []


async def test_a_nested_git_file_pointing_at_a_gitdir_elsewhere_runs_nothing(
    repo: Path, canary: Path, tmp_path: Path, session_of: Any
) -> None:
    vendor = repo / "vendor"
    elsewhere = tmp_path / "elsewhere.git"
    git(repo, "init", "-q", f"--separate-git-dir={elsewhere}", "vendor")
    assert (vendor / ".git").read_text().startswith("gitdir:")
    write(vendor / "lib.py", "# a needle in vendor\n")
    append(elsewhere / "config", f'[core]\n\tfsmonitor = "touch {canary}/gitfile"\n')
    session = session_of(repo)
    await grep_tool_and_api(session, repo)
    assert ran(canary) == []


async def test_a_nested_include_path_runs_nothing(
    repo: Path, canary: Path, session_of: Any
) -> None:
    vendor = nested(repo)
    write(repo / "docs" / "evil.cfg", f'[core]\n\tfsmonitor = "touch {canary}/include"\n')
    git(vendor, "config", "include.path", "../../docs/evil.cfg")
    assert git(vendor, "config", "core.fsmonitor").strip().endswith("include")
    session = session_of(repo)
    await grep_tool_and_api(session, repo)
    assert ran(canary) == []


# -- .git/commondir: grep, the @ list, checkpoints, the git tool --------------------------


@pytest.mark.usefixtures("sandbox_off")  # the git tool's hardening alone
async def test_a_commondir_redirect_runs_nothing_anywhere(
    repo: Path, canary: Path, tmp_path: Path, session_of: Any
) -> None:
    nested(repo)
    common = redirected(repo, tmp_path)
    append(common / "config", f'[core]\n\tfsmonitor = "touch {canary}/fsmonitor"\n')
    hook = write(common / "hooks" / "post-index-change", f"#!/bin/sh\ntouch {canary}/hook\n")
    hook.chmod(0o755)
    assert git(repo, "rev-parse", "--git-common-dir").strip() == str(common)
    session = session_of(repo)

    await grep_tool_and_api(session, repo)
    listed = ProjectFiles(repo, repo).files()  # the prompt's @ picker
    assert "a.txt" in listed and "vendor/" in listed
    snapshot = await session.checkpoints.store.snapshot()  # what each turn takes
    assert "a.txt" in await session.checkpoints.store.files(snapshot.tree)
    status = await tool(session, "git", {"args": "status --short"})
    assert status["exit_status"] == 0 and " M a.txt" in status["output"], status
    added = await tool(session, "git", {"args": "add a.txt"})
    assert added["exit_status"] == 0, added
    assert ran(canary) == []


# -- checkpoints: a nested repository's clean filter -------------------------------------------


@pytest.mark.usefixtures("sandbox_off")  # the git tool's hardening alone
async def test_a_nested_clean_filter_runs_neither_in_checkpoints_nor_in_git_status(
    repo: Path, canary: Path, session_of: Any
) -> None:
    """The shadow repository's own attributes already kept the filter out of checkpoints;
    the git tool ran it in ``vendor/`` once ``vendor`` was a gitlink (a submodule, or an
    embedded repository added), through the ``git status`` git runs inside it."""
    vendor = nested(repo)
    git(vendor, "add", "-A")
    git(vendor, "commit", "-q", "-m", "vendor")
    git(repo, "add", "vendor")  # an embedded repository: a gitlink in the project
    git(repo, "commit", "-q", "-m", "vendor as a gitlink")
    git(vendor, "config", "filter.x.clean", evil(repo / "tools", canary, "clean"))
    write(vendor / ".gitattributes", "*.py filter=x\n")
    write(vendor / "lib.py", "# a needle in VENDOR\n")  # same size: git compares contents
    os.utime(vendor / "lib.py", (1, 1))
    session = session_of(repo)

    first = await session.checkpoints.store.snapshot()
    write(repo / "a.txt", "a needle, changed by a turn\n")
    second = await session.checkpoints.store.snapshot()
    changes = await session.checkpoints.store.changes(first.tree, second.tree)
    assert [change.path for change in changes] == ["a.txt"]
    for args in ["status", "diff", "add -A", "stash", "stash pop"]:
        result = await tool(session, "git", {"args": args})
        assert result["exit_status"] == 0, (args, result)
    assert ran(canary) == []


# -- a git (or ripgrep) planted in the project's virtualenv --------------------------------


async def test_a_git_planted_on_path_inside_the_project_is_not_run(
    repo: Path, canary: Path, monkeypatch: pytest.MonkeyPatch, session_of: Any
) -> None:
    """An activated virtualenv in the project puts its ``bin`` first on PATH, and a
    sandboxed command can write there."""
    nested(repo)
    real_git, real_rg = shutil.which("git"), shutil.which("rg")
    bin_dir = repo / ".venv" / "bin"
    for name, real in [("git", real_git), ("rg", real_rg)]:
        body = f'touch "{canary}/{name}"\n' + (f'exec {real} "$@"\n' if real else "exit 1\n")
        write(bin_dir / name, "#!/bin/sh\n" + body).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    session = session_of(repo)

    assert search.grep(repo, NEEDLE).count == 2
    await grep_tool_and_api(session, repo)
    assert "a.txt" in ProjectFiles(repo, repo).files()
    snapshot = await session.checkpoints.store.snapshot()
    assert "a.txt" in await session.checkpoints.store.files(snapshot.tree)
    assert ran(canary) == []


@pytest.mark.usefixtures("sandbox_off")  # the git tool's hardening alone
async def test_the_users_own_filter_runs_but_never_a_namesake_planted_on_path(
    repo: Path,
    canary: Path,
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    session_of: Any,
) -> None:
    """The user's global config names a filter program (as git-lfs does); a program of
    that name in the project's virtualenv, first on PATH, is never the one git runs, and
    the user's filter still applies (the repository's own drivers are emptied, not the
    user's)."""
    user_bin = tmp_path / "user-bin"
    write(user_bin / "shout", "#!/bin/sh\ntr a-z A-Z\n").chmod(0o755)
    planted = repo / ".venv" / "bin"
    write(planted / "shout", f'#!/bin/sh\ntouch "{canary}/shout"\ncat\n').chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(planted), str(user_bin), os.environ["PATH"]]))
    write(isolated_home / ".gitconfig", '[filter "shout"]\n\tclean = shout\n')
    write(repo / "loud.txt", "quiet words\n")
    write(repo / ".gitattributes", "loud.txt filter=shout\n")
    session = session_of(repo)
    added = await tool(session, "git", {"args": "add loud.txt"})
    assert added["exit_status"] == 0, added
    shown = await tool(session, "git", {"args": "diff --cached -- loud.txt"})
    assert "+QUIET WORDS" in shown["output"], shown
    assert ran(canary) == []


# -- the git tool outside the sandbox: config that names a program ----------------------------


def signed_head(repo: Path) -> None:
    """HEAD made a commit with a ``gpgsig`` header (hand-made: no gpg needed), so that
    ``log.showSignature`` makes git verify it with ``gpg.program``."""
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    parent = git(repo, "rev-parse", "HEAD").strip()
    body = (
        f"tree {tree}\nparent {parent}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n"
        "\nsigned\n"
    )
    made = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        input=body,
        capture_output=True,
        text=True,
        check=True,
    )
    git(repo, "update-ref", "HEAD", made.stdout.strip())


ATTACKS = {  # the git tool's args -> config the attacker writes (PROGRAM: their program)
    "status": "[core]\n\tfsmonitor = PROGRAM\n",
    "diff": "[diff]\n\texternal = PROGRAM\n",
    "log -p -2": '[diff "x"]\n\ttextconv = PROGRAM\n',
    "log -1": "[gpg]\n\tprogram = PROGRAM\n[log]\n\tshowSignature = true\n",
    "add a.txt": '[filter "x"]\n\tclean = PROGRAM\n',
    "checkout -b other": "[core]\n\thooksPath = HOOKS\n",
}


@pytest.mark.usefixtures("sandbox_off")
@pytest.mark.parametrize("args", list(ATTACKS))
async def test_the_git_tool_outside_the_sandbox_runs_no_program_from_config(
    repo: Path, canary: Path, tmp_path: Path, args: str, session_of: Any
) -> None:
    write(repo / ".gitattributes", "*.txt diff=x filter=x\n")
    signed_head(repo)
    common = redirected(repo, tmp_path)
    program = evil(repo / "tools", canary, "program")
    hooks = repo / "tools" / "hooks"
    for name in ("post-checkout", "reference-transaction", "post-index-change"):
        evil(hooks, canary, name)
    append(
        common / "config", ATTACKS[args].replace("PROGRAM", program).replace("HOOKS", str(hooks))
    )
    session = session_of(repo)
    result = await tool(session, "git", {"args": args})
    assert result["ok"] and result["exit_status"] == 0, result
    assert ran(canary) == []


@pytest.mark.usefixtures("sandbox_off")
async def test_the_git_tool_fetches_nothing_for_a_promisor_remote(
    tmp_path: Path, canary: Path, session_of: Any
) -> None:
    """A partial clone fetches a missing object from its promisor remote when git needs
    it; an ``ext::`` URL is a command line."""
    server = tmp_path / "server"
    server.mkdir()
    git(server, "init", "-q", "-b", "main")
    write(server / "f.txt", "one\n")
    git(server, "add", "-A")
    git(server, "commit", "-q", "-m", "one")
    write(server / "f.txt", "two\n")
    git(server, "commit", "-q", "-am", "two")
    git(server, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{server}", str(clone))
    git(clone, "config", "remote.origin.url", f"ext::sh -c touch% {canary}/ext% ;false")
    git(clone, "config", "protocol.ext.allow", "always")
    session = session_of(clone)
    shown = await tool(session, "git", {"args": "show HEAD~1:f.txt"})  # not fetched yet
    assert shown["exit_status"] != 0, shown
    assert ran(canary) == []
    log = await tool(session, "git", {"args": "log --oneline"})
    assert log["exit_status"] == 0 and "two" in log["output"], log


# -- the git tool cannot read a hidden key ----------------------------------------------------


@pytest.fixture
def key(isolated_home: Path) -> Path:
    return write(isolated_home / ".ssh" / "id_rsa", KEY)


LEAKS = [
    "diff --no-index /dev/null {key}",
    "diff /dev/null {key}",  # a --no-index diff without the flag: a path outside the repo
    "diff --no-index -- a.txt {key}",
    "stash push --pathspec-from-file={key}",  # the lines come back in error messages
    "add --pathspec-from-file={key}",
]


@needs_bwrap
@pytest.mark.parametrize("args", LEAKS)
async def test_the_git_tool_in_the_sandbox_shows_no_hidden_key(
    repo: Path, key: Path, args: str, session_of: Any
) -> None:
    session = session_of(repo)
    assert session.sandbox.active, session.sandbox.reason
    result = await tool(session, "git", {"args": args.format(key=key)})
    assert "PRIVATE KEY" not in str(result) and "CANARY-KEY" not in str(result), result
    assert result["ok"] and result["exit_status"] != 0, result  # run, in the sandbox
    status = await tool(session, "git", {"args": "status --short"})  # still works inside
    assert status["exit_status"] == 0 and " M a.txt" in status["output"], status


@pytest.mark.usefixtures("sandbox_off")
@pytest.mark.parametrize("args", LEAKS)
async def test_the_git_tool_outside_the_sandbox_refuses_what_reaches_out(
    repo: Path, key: Path, args: str, session_of: Any
) -> None:
    session = session_of(repo)
    assert not session.sandbox.active
    result = await tool(session, "git", {"args": args.format(key=key)})
    assert result["ok"] is False, result
    assert "PRIVATE KEY" not in str(result) and "CANARY-KEY" not in str(result), result
    assert "refused" in result["error"] or "outside the project" in result["error"]
    assert "\n" not in result["error"]  # one line, saying why
    link = repo / "key-link"
    link.symlink_to(key)  # a symlink in the project to the key resolves outside it
    through = await tool(session, "git", {"args": f"diff -- a.txt {link.name}"})
    assert through["ok"] is False and "outside the project" in through["error"], through
    for reaching in [f"-C {key.parent} log", f"--git-dir={key.parent} log", "-c x=y log"]:
        refused = await tool(session, "git", {"args": reaching})
        assert refused["ok"] is False and "before the subcommand" in refused["error"]
    diff = await tool(session, "git", {"args": "diff -- a.txt"})  # the project still is
    assert diff["exit_status"] == 0 and "+a needle in a.txt, changed" in diff["output"]
