"""The built wheel ships the bundled plugins and finds them once installed (SPEC §1, §8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real wheel per module, built in-process by hatchling's PEP 517 hook."""
    from hatchling.build import build_wheel

    out = tmp_path_factory.mktemp("dist")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        name = build_wheel(str(out))
    path = out / name
    assert path.is_file()
    return path


@pytest.fixture
def unzipped(wheel: Path, tmp_path: Path) -> Path:
    target = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def run_python(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def test_the_wheel_contains_the_bundled_plugins(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())

    assert "tui_agent/bundled_plugins/commands.py" in names
    assert "tui_agent/__init__.py" in names
    assert "tui_agent/core/extensions/plugins.py" in names
    assert not any(name.startswith("plugins/") for name in names)
    source = (REPO / "plugins" / "commands.py").read_bytes()
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("tui_agent/bundled_plugins/commands.py") == source


CHECK = """\
import json, sys
import tui_agent
from tui_agent.core.util.paths import bundled_plugins_dir
session = tui_agent.create_session()
print(json.dumps({
    "file": tui_agent.__file__,
    "bundled": str(bundled_plugins_dir()),
    "commands": session.commands.names,
    "help_source": session.commands.get("help").source,
    "problems": [str(problem) for problem in session.extensions.problems],
}))
"""


def test_the_installed_package_uses_its_bundled_plugins(unzipped: Path, tmp_path: Path) -> None:
    done = run_python(["-c", CHECK], unzipped, tmp_path)

    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert Path(seen["file"]).resolve().is_relative_to(unzipped.resolve())
    assert Path(seen["bundled"]).resolve() == (unzipped / "tui_agent" / "bundled_plugins").resolve()
    assert "/help" in seen["commands"]
    assert {"/help", "/reload", "/tools"} <= set(seen["commands"])
    assert seen["help_source"].startswith("bundled")
    assert seen["problems"] == []


def test_the_installed_cli_prints_tool_definitions(unzipped: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "home" / ".agents" / "plugins" / "ping.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(
        "import tui_agent\n\n"
        "@tui_agent.setup('ping')\n"
        "def ping(session):\n"
        "    session.toolbox.add('ping', description='Answer pong', handler=lambda args: 'pong')\n",
        encoding="utf-8",
    )

    done = run_python(["-m", "tui_agent", "tools", "--json"], unzipped, tmp_path)

    assert done.returncode == 0, done.stderr
    definitions = json.loads(done.stdout)
    assert isinstance(definitions, list)
    names = [d["function"]["name"] for d in definitions]
    # the bundled built-ins load from inside the wheel, then the home plugin's tool
    assert {"read", "write", "edit", "glob", "grep", "list", "execute", "git"} <= set(names)
    assert names[-1] == "ping"
    assert definitions[-1] == {
        "type": "function",
        "function": {
            "name": "ping",
            "description": "Answer pong",
            "parameters": {"type": "object", "properties": {}, "required": []},
        },
    }
