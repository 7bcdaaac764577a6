"""Plugin packages: entry points in the ``tui_agent.plugins`` group (README, "Plugin packages").

In-process tests put fake installed distributions (a ``*.dist-info`` folder with
``METADATA`` and ``entry_points.txt``, and the plugin's module beside it) on ``sys.path``,
which is all importlib.metadata reads. The last test builds the README's example package
into a real wheel and installs it in a fresh virtual environment.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.extensions import packages
from tui_agent.core.extensions.plugins import plugin_errors

REPO = Path(__file__).resolve().parents[3]
_NUMBER = itertools.count()

Installer = Callable[..., str]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Installer]:
    """``install(distribution, version, entry_points, {module_name: source})`` makes a fake
    installed distribution in a folder on ``sys.path``; each module name gets a unique
    suffix (``{n}`` in names and sources), as sys.modules outlives the test. Returns the
    suffix."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    imported: list[str] = []

    def make(
        distribution: str, version: str, entry_points: dict[str, str], modules: dict[str, str]
    ) -> str:
        n = f"_{next(_NUMBER)}"
        info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
        write(
            info / "METADATA", f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n"
        )
        lines = [f"{name} = {value.format(n=n)}" for name, value in entry_points.items()]
        write(info / "entry_points.txt", "[tui_agent.plugins]\n" + "\n".join(lines) + "\n")
        for name, source in modules.items():
            write(site / f"{name.format(n=n)}.py", source.replace("{n}", n))
            imported.append(name.format(n=n))
        return n

    yield make
    for name in imported:
        sys.modules.pop(name, None)


SHOUT = """\
import tui_agent

LOADS = []


@tui_agent.setup("shout{n}")
def setup(session):
    session.toolbox.add("shout{n}", description="Say it loud",
                        handler=lambda args: args.get("text", "").upper())
    session.commands.register("shout{n}", description="Shout", handler=lambda text: None)
"""


def test_a_module_entry_point_loads_like_a_plugin_file(install: Installer, project: Path) -> None:
    n = install("tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": SHOUT})

    session = create_session(project)

    assert session.extensions.problems == []
    tool = session.toolbox.tools[f"shout{n}"]
    assert tool.source == "package:tui-agent-shout"
    assert session.commands.get(f"shout{n}").source == "package:tui-agent-shout"
    listed = [p for p in session.extensions.plugins if p.scope == "package"]
    assert [(p.name, p.source, p.setups) for p in listed] == [
        ("shout", "tui-agent-shout==1.2.0", (f"shout{n}",))
    ]
    assert listed[0].package is not None and listed[0].package.value == f"shout{n}"


async def test_a_module_entry_point_runs_again_on_reload(install: Installer, project: Path) -> None:
    counting = SHOUT.replace(
        "LOADS = []",
        "import builtins\nbuiltins.shout_loads{n} = getattr(builtins, 'shout_loads{n}', 0) + 1",
    )
    n = install("tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": counting})
    import builtins

    session = create_session(project)
    await session.reload()

    assert getattr(builtins, f"shout_loads{n}") == 2
    assert f"shout{n}" in session.toolbox.tools
    delattr(builtins, f"shout_loads{n}")


CALLABLE = """\
CALLS = []


def register(session):
    CALLS.append(session)
    session.toolbox.add("whisper{n}", description="Say it softly",
                        handler=lambda args: args.get("text", "").lower())
"""


async def test_a_callable_entry_point_is_called_with_the_session_on_every_load(
    install: Installer, project: Path
) -> None:
    n = install(
        "tui-agent-whisper", "0.3", {"whisper": "whisper{n}:register"}, {"whisper{n}": CALLABLE}
    )

    session = create_session(project)
    await session.reload()

    module = sys.modules[f"whisper{n}"]
    assert module.CALLS == [session, session]
    assert session.toolbox.tools[f"whisper{n}"].source == "package:tui-agent-whisper"
    result = await session.toolbox.run(f"whisper{n}", {"text": "HUSH"})
    assert result["output"] == "hush"
    (listed,) = [p for p in session.extensions.plugins if p.scope == "package"]
    assert listed.setups == ("whisper",)  # registered under the entry point's name
    assert plugin_errors(listed, session.extensions.problems) == []


def test_a_broken_package_is_reported_and_the_others_load(
    install: Installer, project: Path
) -> None:
    install("aaa-broken", "0.1", {"broken": "missing_module_{n}"}, {})
    install("aab-exits", "2.0", {"exits": "exits{n}"}, {"exits{n}": "import sys\nsys.exit(3)\n"})
    install(
        "aac-setup-raises",
        "1.0",
        {"raises": "raises{n}:setup"},
        {
            "raises{n}": "def setup(session):\n"
            "    session.toolbox.add('half{n}', description='x', handler=print)\n"
            "    raise RuntimeError('no key configured')\n"
        },
    )
    install(
        "aad-half",
        "1.0",
        {"half": "half{n}"},
        {
            "half{n}": "import tui_agent\n"
            "tui_agent.setup('early{n}', print)\n"
            "raise ImportError('half done')\n"
        },
    )
    n = install("tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": SHOUT})

    session = create_session(project)

    problems = {str(p) for p in session.extensions.problems}
    assert any(
        p.startswith("aaa-broken==0.1: entry point broken = missing_module_")
        and "ModuleNotFoundError: No module named 'missing_module_" in p
        for p in problems
    ), problems
    assert any(
        p.startswith("aab-exits==2.0: entry point exits = exits") and "SystemExit: 3" in p
        for p in problems
    ), problems
    assert "aac-setup-raises==1.0 (setup 'raises'): RuntimeError: no key configured" in problems
    assert any(p.startswith("aad-half==1.0") and "ImportError: half done" in p for p in problems)
    assert not any(name.startswith("half") for name in session.toolbox.tools)  # rolled back
    assert not any(name.startswith("early") for name in session.extensions.config.setups)
    assert f"shout{n}" in session.toolbox.tools
    assert "read" in session.toolbox.tools  # the bundled plugins are untouched
    statuses = {
        p.source: plugin_errors(p, session.extensions.problems)
        for p in session.extensions.plugins
        if p.scope == "package"
    }
    assert statuses["tui-agent-shout==1.2.0"] == []
    assert statuses["aac-setup-raises==1.0"] == ["setup 'raises': RuntimeError: no key configured"]
    assert "SystemExit: 3" in statuses["aab-exits==2.0"][0]


USER_OVERRIDE = """\
import tui_agent


@tui_agent.setup("mine")
def setup(session):
    session.toolbox.add("shout{n}", description="My own", handler=lambda args: "mine")
"""

PACKAGE_OVERRIDES_READ = (
    SHOUT
    + """

@tui_agent.setup("package-read{n}")
def replace_read(session):
    session.toolbox.add("read", description="A package's read", handler=lambda args: "pkg")
"""
)


async def test_packages_load_after_bundled_plugins_and_before_user_files(
    install: Installer, project: Path, isolated_home: Path, user_config_dir: Path
) -> None:
    n = install(
        "tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": PACKAGE_OVERRIDES_READ}
    )
    write(isolated_home / ".agents" / "plugins" / "mine.py", USER_OVERRIDE.replace("{n}", n))
    write(user_config_dir / "plugins" / "later.py", "")

    session = create_session(project)

    assert session.extensions.problems == []
    # the package replaced the bundled read; the user's file replaced the package's tool
    assert session.toolbox.tools["read"].source == "package:tui-agent-shout"
    assert (await session.toolbox.run("read", {}))["output"] == "pkg"
    assert session.toolbox.tools[f"shout{n}"].source == "home:mine.py"
    assert (await session.toolbox.run(f"shout{n}", {}))["output"] == "mine"
    scopes = [p.scope for p in session.extensions.plugins]
    first_package = scopes.index("package")
    assert set(scopes[:first_package]) == {"bundled"}
    assert scopes[first_package:] == ["package", "home", "user"]


def test_skipped_project_plugins_are_listed(project: Path) -> None:
    write(project / ".agents" / "plugins" / "local.py", "raise SystemExit('must not run')\n")

    session = create_session(project)

    (skipped,) = [p for p in session.extensions.plugins if p.skipped]
    assert (skipped.scope, skipped.name) == ("project", "local.py")
    assert skipped.source == str(project / ".agents" / "plugins" / "local.py")


async def test_the_scan_is_kept_until_the_environment_changes(
    install: Installer, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans: list[int] = []
    real_scan = packages.scan

    def counted() -> list[packages.Package]:
        found = real_scan()
        scans.append(len(found))
        return found

    monkeypatch.setattr(packages, "scan", counted)
    n = install("tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": SHOUT})
    session = create_session(project)
    await session.reload()
    assert scans == [1]  # the reload asked the kept answer

    time.sleep(0.05)  # past the file system's clock tick: a real install comes much later
    install(
        "tui-agent-whisper", "0.3", {"whisper": "whisper{n}:register"}, {"whisper{n}": CALLABLE}
    )
    await session.reload()

    assert scans == [1, 2]
    assert f"shout{n}" in session.toolbox.tools
    assert any(name.startswith("whisper") for name in session.toolbox.tools)


def test_importlib_metadata_is_asked_only_when_a_distribution_may_name_the_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``scan`` reads the distributions' ``entry_points.txt`` where importlib.metadata
    finds them and leaves importlib.metadata (~1 MB of modules) out when none names the
    group; whenever it may, or it cannot tell, importlib.metadata gives the answer."""
    from importlib import metadata

    asked: list[str] = []
    entry_points = metadata.entry_points

    def counted(**params: str) -> metadata.EntryPoints:
        asked.append(params["group"])
        return entry_points(**params)

    monkeypatch.setattr(metadata, "entry_points", counted)
    # where the tests run: a "no" is importlib.metadata's answer too
    assert packages.mentioned() or not entry_points(group=packages.GROUP)

    site, other = tmp_path / "site", tmp_path / "other"
    write(site / "tool-1.0.dist-info" / "entry_points.txt", "[console_scripts]\nt = t:main\n")
    write(site / "plain-2.0.dist-info" / "METADATA", "Name: plain\n")
    write(site / "legacy-1.0.egg-info", "Metadata-Version: 1.0\n")  # a file
    write(site / "tui_agent_plugins_notes.txt", "[tui_agent.plugins] in no distribution\n")
    other.mkdir()
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing"), str(other)])
    assert not packages.mentioned()
    assert packages.scan() == [] and asked == []

    found = other / "Found-3.0.DIST-INFO"
    write(found / "METADATA", "Metadata-Version: 2.1\nName: found\nVersion: 3.0\n")
    write(found / "entry_points.txt", "[tui_agent.plugins]\nf = f\n")
    assert packages.mentioned()
    assert [(p.name, p.module) for p in packages.scan()] == [("f", "f")]
    assert asked == [packages.GROUP]

    egg = tmp_path / "old.egg"  # an egg on the path keeps its metadata in EGG-INFO
    write(egg / "EGG-INFO" / "entry_points.txt", "[tui_agent.plugins]\ne = e\n")
    monkeypatch.setattr(sys, "path", [str(site), str(egg)])
    assert packages.mentioned()

    archive = tmp_path / "bundle.zip"  # importlib.metadata reads inside a zip: not this check
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("z-1.0.dist-info/METADATA", "Name: z\n")
    monkeypatch.setattr(sys, "path", [str(site), str(archive)])
    assert packages.mentioned()

    class Finder:  # a finder of distributions of its own
        @staticmethod
        def find_distributions(*args: object, **kwargs: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "path", [str(site)])
    assert not packages.mentioned()
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert packages.mentioned()


def test_the_plugins_command_lists_files_and_packages(
    install: Installer,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tui_agent.cli import main

    monkeypatch.setenv("COLUMNS", "160")

    install("aaa-broken", "0.1", {"broken": "missing_module_{n}"}, {})
    n = install("tui-agent-shout", "1.2.0", {"shout": "shout{n}"}, {"shout{n}": SHOUT})
    write(project / ".agents" / "plugins" / "local.py", "")

    assert main(["plugins", "--json", "-C", str(project)]) == 0
    rows = json.loads(capsys.readouterr().out)

    by_name = {row["name"]: row for row in rows}
    assert by_name["files.py"]["scope"] == "bundled"
    assert by_name["files.py"]["status"] == "ok"
    assert "read" in by_name["files.py"]["tools"]
    assert by_name["shout"] == {
        "name": "shout",
        "scope": "package",
        "source": "tui-agent-shout==1.2.0",
        "version": "1.2.0",
        "entry_point": f"shout{n}",
        "status": "ok",
        "errors": [],
        "tools": [f"shout{n}"],
        "commands": [f"/shout{n}"],
    }
    assert by_name["broken"]["status"] == "error"
    assert "ModuleNotFoundError" in by_name["broken"]["errors"][0]
    assert by_name["local.py"]["status"] == "skipped"

    assert main(["plugins", "-C", str(project)]) == 0
    table = capsys.readouterr().out
    assert "tui-agent-shout==1.2.0 (shout)" in table
    assert "skipped: untrusted folder" in table


# -- the README's example package, built into a real wheel and installed ----------------------

MARKER = re.compile(r"<!-- plugin-package: (\S+) -->\n```\w+\n(.*?)```", re.S)


def readme_package(folder: Path) -> list[str]:
    """Write the example package's files exactly as the README shows them."""
    found = MARKER.findall((REPO / "README.md").read_text(encoding="utf-8"))
    for name, text in found:
        write(folder / name, text)
    return [name for name, _ in found]


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def test_the_readme_package_builds_installs_and_loads_in_a_fresh_venv(
    tmp_path: Path, isolated_home: Path
) -> None:
    """Offline: the wheel is built with this environment's hatchling (no build isolation,
    no index); the fresh venv is made from the base interpreter, and a ``.pth`` file adds
    this environment's site-packages to it (``site.addsitedir``, so the editable
    tui-agent's own ``.pth`` works there too) for tui-agent and its dependencies."""
    source = tmp_path / "tui-agent-shout"
    assert readme_package(source) == ["pyproject.toml", "tui_agent_shout.py", "tests/test_shout.py"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INDEX="1", PYTHONDONTWRITEBYTECODE="1")
    wheels = tmp_path / "wheels"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            str(source),
        ],
        tmp_path,
        env,
    )
    (wheel,) = wheels.glob("tui_agent_shout-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "tui_agent_shout.py" in archive.namelist()
        entry_points = archive.read("tui_agent_shout-0.1.0.dist-info/entry_points.txt").decode()
    assert "[tui_agent.plugins]\nshout = tui_agent_shout" in entry_points

    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], tmp_path, env)
    python = str(venv / "bin" / "python")
    site = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path, env
    )
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in ours)
    Path(site.stdout.strip(), "_tui_agent_test_env.pth").write_text(lines)
    run([python, "-m", "pip", "install", "--no-index", "--no-deps", str(wheel)], tmp_path, env)

    work = tmp_path / "work"
    work.mkdir()
    listed = json.loads(run([python, "-m", "tui_agent", "plugins", "--json"], work, env).stdout)
    (row,) = [r for r in listed if r["scope"] == "package"]
    assert row == {
        "name": "shout",
        "scope": "package",
        "source": "tui-agent-shout==0.1.0",
        "version": "0.1.0",
        "entry_point": "tui_agent_shout",
        "status": "ok",
        "errors": [],
        "tools": ["shout"],
        "commands": ["/shout"],
    }
    tools = json.loads(run([python, "-m", "tui_agent", "tools", "--json"], work, env).stdout)
    assert "shout" in [t["function"]["name"] for t in tools]
    where = run(
        [python, "-c", "import tui_agent_shout; print(tui_agent_shout.__file__)"], work, env
    )
    assert Path(where.stdout.strip()).is_relative_to(venv)

    # the README's test of the package, run against the installed package
    inner = tmp_path / "inner-pytest"
    tested = run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--basetemp={inner}", "tests"],
        source,
        env,
    )
    assert "1 passed" in tested.stdout
