"""One ``SKILL.md`` read and checked as the Agent Skills specification says
(agentskills.io/specification, and its reference validator ``skills-ref``):

- ``name``: 1-64 characters, lowercase letters and digits (Unicode, NFKC) and hyphens,
  not starting or ending with a hyphen, no ``--``, equal to the folder's name;
- ``description``: 1-1024 characters; ``compatibility``: 1-500; ``metadata``: a map;
  ``allowed-tools``: a string (space-separated; Claude Code's comma list and a YAML list
  of strings are read too).

A file that breaks a rule is a ``LoadProblem`` (``path:line``, what to fix) and no skill;
the other skills still load. Fields the spec does not name (Claude Code's
``disable-model-invocation``, ``user-invocable``, ``argument-hint``, ``model``…) are no
error: the first three are honoured, the others ignored. Where the client guide says so,
YAML that other clients accept is read too: an unquoted value holding ``: `` is retried
as a quoted string. In Claude Code's folders a missing ``name`` is the folder's (Claude
Code's rule), said in a note.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..project.config import LoadProblem
from ..util import front_matter

FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_FILE_BYTES = 512 * 1024  # a SKILL.md larger than this is not read
_RULE_WORD = re.compile(r"[^\s,()]+(?:\([^)]*\))?")


@dataclass(frozen=True)
class Skill:
    """One skill, read: what the catalog shows (``name``, ``description``), where it is
    (``path`` of its ``SKILL.md``, ``folder``), where it came from (``source``: ``project``,
    ``user`` or ``plugin:<name>``; ``place``: the folder as the user knows it), its
    instructions (``body``, the front matter taken off) and what its front matter asks."""

    name: str
    description: str
    path: Path
    source: str
    place: str
    body: str
    size: int = 0  # bytes of SKILL.md
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    model_invocable: bool = True  # not disable-model-invocation
    user_invocable: bool = True
    argument_hint: str = ""
    notes: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        return self.path.parent


@dataclass
class Reading:
    """What reading one ``SKILL.md`` found: the skill (None when it is not one), the
    problems that kept it out and notes on what was read leniently."""

    path: Path
    skill: Skill | None = None
    problems: list[LoadProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _line(lines: list[str], key: str) -> int:
    """The file's line (from 1) of ``key`` in the front matter (2 when absent)."""
    for number, text in enumerate(lines[1:], start=2):
        if text.strip() == "---":
            break
        if re.match(rf"['\"]?{re.escape(key)}['\"]?\s*:", text):
            return number
    return 2


def name_problems(name: str, folder: str) -> list[str]:
    """What is wrong with ``name`` for a skill in ``folder`` (the spec's rules)."""
    wrong = []
    if len(name) > MAX_NAME:
        wrong.append(f"is {len(name)} characters: at most {MAX_NAME}")
    if name != name.lower():
        wrong.append("must be lowercase")
    if not all(char.isalnum() or char == "-" for char in name):
        wrong.append("may hold only letters, digits and hyphens")
    if name.startswith("-") or name.endswith("-"):
        wrong.append("must not start or end with a hyphen")
    if "--" in name:
        wrong.append("must not hold two hyphens in a row")
    if not wrong and unicodedata.normalize("NFKC", folder) != name:
        wrong.append(f"must be the folder's name ({folder}): rename one of them")
    return wrong


def _words(value: str) -> tuple[str, ...]:
    """``Bash(git status:*) Read, Grep`` → ``("Bash(git status:*)", "Read", "Grep")``."""
    return tuple(_RULE_WORD.findall(value))


def read_skill(path: Path, *, source: str, place: str, claude: bool = False) -> Reading:
    """The skill whose ``SKILL.md`` is ``path``; ``claude``: a Claude Code folder (a
    missing ``name`` is the folder's there)."""
    reading = Reading(path)

    def problem(line: int, message: str) -> Reading:
        reading.problems.append(LoadProblem(f"{path}:{line}", message))
        return reading

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return problem(1, f"larger than {MAX_FILE_BYTES // 1024} KB: not read as a skill")
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) dropped
    except (OSError, UnicodeDecodeError) as exc:
        return problem(1, f"could not be read: {exc}")
    lines = text.splitlines()
    try:
        front, body, _ = front_matter.split(
            text, "a SKILL.md starts with a --- line, then name and description, then ---"
        )
        data, lenient = front_matter.load(front, colon_fallback=True, at_start=True)
    except front_matter.FrontMatterError as bad:
        return problem(bad.line, bad.message)
    if lenient:
        reading.notes.append(f"{path}: a value with ': ' in it was read as a quoted string")
    folder = path.parent.name
    wrong: list[tuple[str, str]] = []
    name = data.get("name")
    if name is None and claude:
        name = folder
        reading.notes.append(f"{path}: no name: the folder's ({folder}), as Claude Code reads it")
    if name is None:
        wrong.append(("name", "no name: the spec requires one, equal to the folder's name"))
    elif not isinstance(name, str) or not name.strip():
        wrong.append(("name", "name must be a non-empty string"))
    else:
        name = unicodedata.normalize("NFKC", name.strip())
        wrong += [("name", f"the name {name!r} {why}") for why in name_problems(name, folder)]
    description = data.get("description")
    if description is None:
        wrong.append(("description", "no description: the model could not know when to use it"))
    elif not isinstance(description, str) or not description.strip():
        wrong.append(("description", "description must be a non-empty string"))
    elif len(description.strip()) > MAX_DESCRIPTION:
        wrong.append(
            (
                "description",
                f"description is {len(description.strip())} characters: at most {MAX_DESCRIPTION}",
            )
        )
    compatibility = data.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or not 1 <= len(compatibility) <= MAX_COMPATIBILITY
    ):
        wrong.append(("compatibility", f"compatibility must be 1-{MAX_COMPATIBILITY} characters"))
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        wrong.append(("metadata", "metadata must be a map of keys to values"))
    allowed = data.get("allowed-tools")
    if (
        allowed is not None
        and not isinstance(allowed, str)
        and not (isinstance(allowed, list) and all(isinstance(item, str) for item in allowed))
    ):
        wrong.append(("allowed-tools", "allowed-tools must be a string of tool names"))
    for key, message in wrong:
        problem(_line(lines, key), message)
    if wrong:
        return reading
    assert isinstance(name, str) and isinstance(description, str)
    flags: dict[str, bool] = {}
    for key, default in (("disable-model-invocation", False), ("user-invocable", True)):
        value = data.get(key, default)
        if not isinstance(value, bool):
            reading.notes.append(
                f"{path}:{_line(lines, key)}: {key} must be true or false: {default} used"
            )
            value = default
        flags[key] = value
    hint = data.get("argument-hint")
    if allowed is None:
        rules: tuple[str, ...] = ()
    elif isinstance(allowed, str):
        rules = _words(allowed)
    else:
        rules = tuple(word for item in allowed for word in _words(item))
    license_ = data.get("license")
    reading.skill = Skill(
        name=name,
        description=" ".join(description.split()),
        path=path,
        source=source,
        place=place,
        body=body,
        size=size,
        license=license_ if isinstance(license_, str) else "",
        compatibility=compatibility or "",
        metadata={str(k): str(v) for k, v in (metadata or {}).items()},
        allowed_tools=rules,
        model_invocable=not flags["disable-model-invocation"],
        user_invocable=flags["user-invocable"],
        argument_hint=hint if isinstance(hint, str) else "",
        notes=tuple(reading.notes),
    )
    return reading
