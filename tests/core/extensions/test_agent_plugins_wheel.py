"""The Agent Plugins 1.0.0 schemas ship in the wheel and validate from the installed package
(§5.2: "Clients MUST NOT retrieve a schema while loading a plugin")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCHEMAS = "tui_agent/schemas/agent-plugins/1.0.0"

CHECK = """\
import json
from tui_agent.agent_plugins import find_agent_plugins, schema_file
print(json.dumps({
    "schema": str(schema_file("plugin")),
    "plugins": [(p.name, p.valid, [str(x) for x in p.problems]) for p in find_agent_plugins(None)],
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from hatchling.build import build_wheel

    out = tmp_path_factory.mktemp("dist")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(REPO)
        name = build_wheel(str(out))
    return out / name


def test_the_wheel_ships_the_schemas_verbatim(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for kind in ("plugin", "mcp"):
            shipped = archive.read(f"{SCHEMAS}/{kind}.schema.json")
            assert shipped == (REPO / SCHEMAS / f"{kind}.schema.json").read_bytes()


def test_the_installed_package_validates_with_its_own_schemas(
    wheel: Path, tmp_path: Path, isolated_home: Path
) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    plugins = isolated_home / ".agents" / "plugins"
    for folder, manifest in [
        (
            "good",
            {
                "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
                "name": "good",
            },
        ),
        (
            "bad",
            {
                "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
                "name": "Bad",
            },
        ),
    ]:
        (plugins / folder).mkdir(parents=True)
        (plugins / folder / "plugin.json").write_text(json.dumps(manifest))
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert Path(seen["schema"]).resolve() == (site / SCHEMAS / "plugin.schema.json").resolve()
    assert seen["plugins"] == [
        [
            "bad",
            False,
            [
                f"{plugins / 'bad' / 'plugin.json'}: invalid Agent Plugin manifest, plugin not "
                "loaded: name 'Bad' must be 1-64 characters of a-z, 0-9, '-' and '.', starting "
                "and ending with a letter or digit, without '--' or '..'"
            ],
        ],
        ["good", True, []],
    ]
