"""Front matter: the ``---`` block of YAML at the top of a Markdown file (agent files,
``SKILL.md``), split from the body and read as a mapping. Problems carry the file's line;
each reader words them for its own kind of file."""

from __future__ import annotations

import json
import re
from typing import Any

_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")


class FrontMatterError(ValueError):
    """What is wrong, and the line of the file it is on (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{line}: {message}")
        self.line = line
        self.message = message


def split(text: str, opening: str) -> tuple[str, str, int]:
    """The front matter's YAML, the body (trimmed) and the line the body starts on.
    ``opening`` says how such a file starts, for the error when it does not."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(1, f"no front matter: {opening}")
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]).strip(), index + 2
    raise FrontMatterError(1, "the front matter's --- block is never closed by a --- line")


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _quoted_colons(front: str) -> str:
    """``key: text: more`` lines (YAML other clients accept) with the value quoted."""
    fixed = []
    for line in front.splitlines():
        found = _KEY.match(line)
        value = found.group(2).strip() if found else ""
        if found and ": " in value and value[:1] not in "\"'|>[{&*!#":
            line = f"{found.group(1)}: {json.dumps(value)}"
        fixed.append(line)
    return "\n".join(fixed)


def load(
    front: str, *, colon_fallback: bool = False, at_start: bool = False
) -> tuple[dict[str, Any], bool]:
    """The front matter as a mapping (PyYAML's safe loader, imported only when a file is
    read), and whether the fallback for unquoted ``: `` in values was needed (tried only
    with ``colon_fallback``, as the Agent Skills client guide advises). A YAML error names
    the line where the parser noticed it, or with ``at_start`` where the broken part
    starts (an unclosed "[" is noticed at the end)."""
    import yaml

    try:
        data = yaml.load(front, Loader=_loader()) if front.strip() else {}
        lenient = False
    except yaml.YAMLError as exc:
        try:
            if not colon_fallback:
                raise
            data = yaml.load(_quoted_colons(front), Loader=_loader())
            lenient = True
        except yaml.YAMLError:
            mark = getattr(exc, "context_mark", None) if at_start else None
            mark = mark or getattr(exc, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 1
            reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise FrontMatterError(line, f"the front matter is not valid YAML: {reason}") from exc
    if not isinstance(data, dict):
        raise FrontMatterError(2, "the front matter must be a mapping of keys to values")
    return data, lenient
