"""Built-in file tools: read, write, edit, glob, grep, list.

Paths are resolved against the session's folder. glob, grep and list search through
``tui_agent.search`` (ripgrep, git or Python, the same results from each: ignore files
honoured inside and outside git, bulky folders skipped) and stop at 100 results, saying so.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import tui_agent
from tui_agent import images, search
from tui_agent.edits import Edit, EditError, apply_edits, unified_diff

READ_LIMIT = 2000
LINE_CUT = 2000
READ_BYTES = 50 * 1024  # one read's output, unless `limit` asks for more lines
READ_MAX_BYTES = 256 * 1024  # even then
RESULTS = 100


def is_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        return b"\0" in handle.read(8192)


@tui_agent.setup("files")
def files(session: tui_agent.Session) -> None:
    toolbox = session.toolbox

    def resolve(path: str | None) -> Path:
        target = Path(os.path.expanduser(path or "."))
        return target if target.is_absolute() else session.directory / target

    def shown(path: Path) -> str:
        try:
            return path.relative_to(session.directory).as_posix() or "."
        except ValueError:
            return str(path)

    def listing(root: Path) -> list[Path]:
        """Files under ``root`` by the search rules (ignore files, skipped folders; no
        symlinks), in order."""
        return [root / p for p in search.files(root).paths]

    def under(root: Path, relative: str) -> str:
        """A path the search found under ``root``, as the tools show paths."""
        return shown(root / relative) if relative else shown(root)

    def suggestions(path: Path) -> list[str]:
        candidates: list[str] = []
        if path.parent.is_dir():
            candidates += [shown(p) for p in path.parent.iterdir()]
        candidates += [shown(p) for p in listing(session.directory)[:5000]]
        by_name = {Path(c).name: c for c in candidates}
        close = difflib.get_close_matches(path.name, list(by_name), n=5, cutoff=0.5)
        return list(dict.fromkeys(by_name[c] for c in close))

    def read_image(path: Path) -> dict[str, Any] | None:
        """A PNG, JPEG, GIF or WebP file: its copy for a model that takes images (the
        provider shows it after the tool results), a note for one that does not; None
        when it is no image after all."""
        with path.open("rb") as handle:
            if images.sniff(handle.read(16)) is None:
                return None
        try:
            prepared = images.read(path, shown(path))
        except images.NotAnImage:
            return None
        except (images.ImageError, OSError) as exc:
            return {"error": str(exc)}
        about = f"{shown(path)}: {prepared.detail()}"
        provider = session.provider
        refused = getattr(provider, "images_refused", None)
        if getattr(provider, "images", None) is False or refused:
            model = getattr(provider, "model", "?")
            why = refused or f'[models."{model}"] images = false'
            return {
                "path": shown(path),
                "output": f"{about}. Not shown: model {model} does not take images ({why}).",
            }
        copy = images.save(prepared.data, prepared.kind)
        return {
            "path": shown(path),
            "output": f"{about}. The image follows in the next message.",
            "image": {"file": str(copy), "path": shown(path), "mime": prepared.mime},
        }

    @toolbox.add(
        "read",
        read_only=True,
        description=(
            "Read a text file: numbered lines from `offset`, at most `limit` (2000) and 50 KB; "
            "`next_offset` to go on. Lists a folder; shows an image (PNG, JPEG, GIF, WebP) to "
            "a model that takes images; refuses other binary files."
        ),
        params={
            "path": {"type": "string", "description": "File to read"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Most lines to return"},
        },
        required=["path"],
        aliases=["open"],
    )
    def read(args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(args["path"])
        if path.is_dir():
            listed = list_({"path": str(path), "depth": 1})
            if "error" not in listed:
                cut = f" {listed['note']}." if "note" in listed else ""
                listed["note"] = (
                    f"{shown(path)} is a folder: its entries, one level, as list gives them.{cut} "
                    "Read a file in it, or list it deeper."
                )
            return {"path": shown(path), "folder": True, **listed}
        if not path.is_file():
            close = suggestions(path)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            return {"error": f"file not found: {shown(path)}.{hint}"}
        image = read_image(path)
        if image is not None:
            return image
        if is_binary(path):
            return {"error": f"{shown(path)} is a binary file; not reading it"}
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        offset = int(args.get("offset") or 1)
        limit = int(args.get("limit") or READ_LIMIT)
        cap = READ_MAX_BYTES if args.get("limit") else READ_BYTES
        chosen = lines[offset - 1 : offset - 1 + limit]
        if offset > 1 and not chosen:
            return {
                "path": shown(path),
                "content": "",
                "total_lines": len(lines),
                "note": f"offset {offset} is past the end: the file has {len(lines)} lines",
            }
        out: list[str] = []
        size = 0
        for number, line in enumerate(chosen, offset):
            if len(line) > LINE_CUT:
                line = line[:LINE_CUT] + f"… [{len(line) - LINE_CUT} characters cut]"
            row = f"{number:>6}\t{line}"
            size += len(row.encode("utf-8", errors="replace")) + 1
            if out and size > cap:  # a cut line always fits: one line is never refused
                break
            out.append(row)
        result: dict[str, Any] = {
            "path": shown(path),
            "content": "\n".join(out),
            "total_lines": len(lines),
        }
        last = offset - 1 + len(out)
        if last < len(lines):
            result["next_offset"] = last + 1
            shown_lines = f"showing lines {offset}-{last} of {len(lines)}"
            if len(out) < len(chosen):
                rest = lines[last:]
                left = sum(len(x.encode("utf-8", errors="replace")) + 1 for x in rest)
                result["note"] = (
                    f"{shown_lines} (the {cap // 1024} KB cap of one read); {len(rest)} more "
                    f"lines ({left} bytes) not shown; read on with offset={last + 1}"
                    + ("" if args.get("limit") else ", or ask for more with limit")
                )
            else:
                result["note"] = f"{shown_lines}; read on with offset={last + 1}"
        return result

    @toolbox.add(
        "write",
        description="Write a file (creating parent folders), replacing what was there.",
        params={
            "path": {"type": "string", "description": "File to write"},
            "content": {"type": "string", "description": "The whole new content"},
        },
        required=["path", "content"],
    )
    def write(args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(args["path"])
        if path.is_dir():
            return {"error": f"{shown(path)} is a folder"}
        path.parent.mkdir(parents=True, exist_ok=True)
        data = args["content"].encode("utf-8")
        existed = path.exists()
        path.write_bytes(data)
        return {"path": shown(path), "bytes": len(data), "created": not existed}

    @toolbox.add(
        "edit",
        description=(
            "Replace `old` with `new` in a file (once, or all with replace_all), or apply "
            "`edits` in order, all or none. Returns a diff."
        ),
        params={
            "path": {"type": "string", "description": "File to change"},
            "old": {"type": "string", "description": "Exact text to replace"},
            "new": {"type": "string", "description": "Replacement text"},
            "replace_all": {"type": "boolean", "default": False, "description": "Every occurrence"},
            "edits": {
                "type": "array",
                "minItems": 1,
                "description": "Applied in order",
                "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                    "required": ["old", "new"],
                },
            },
        },
        required=["path"],
    )
    def edit(args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(args["path"])
        if not path.is_file():
            return {"error": f"file not found: {shown(path)}"}
        try:
            edits = requested_edits(args)
        except ValueError as exc:
            return {"error": str(exc)}
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return {"error": f"{shown(path)} is not UTF-8 text; not editing it"}
        try:
            applied = apply_edits(text, edits, shown(path))
        except EditError as exc:
            written = "" if len(edits) == 1 else "; no edit was written"
            return {"error": f"{exc}{written}"}
        updated = applied[-1].text
        path.write_bytes(updated.encode("utf-8"))
        diff = unified_diff(text, updated, shown(path))
        result: dict[str, Any] = {
            "path": shown(path),
            "replacements": sum(a.replacements for a in applied),
            "diff": diff,
        }
        tolerant = [(n, a) for n, a in enumerate(applied, 1) if a.matched != "exact"]
        if "edits" in args:
            result["edits"] = len(applied)
            if tolerant:
                result["matched"] = [a.matched for a in applied]
                result["note"] = "\n".join(f"edit {n}: {a.note}" for n, a in tolerant)
        elif tolerant:
            result["matched"] = applied[0].matched
            result["note"] = applied[0].note
        return result

    def requested_edits(args: dict[str, Any]) -> list[Edit]:
        """old/new, or edits; never both (which would come first is anyone's guess)."""
        if "edits" in args:
            if "old" in args or "new" in args or args.get("replace_all"):
                raise ValueError(
                    "give either old and new, or edits (each with its own replace_all), not both"
                )
            return [
                Edit(e["old"], e["new"], bool(e.get("replace_all", False))) for e in args["edits"]
            ]
        missing = [name for name in ("old", "new") if name not in args]
        if missing:
            raise ValueError(f"{' and '.join(missing)} missing: give old and new, or edits")
        return [Edit(args["old"], args["new"], bool(args.get("replace_all", False)))]

    def capped(items: list[str], what: str) -> dict[str, Any]:
        result: dict[str, Any] = {what: items[:RESULTS], "count": len(items)}
        if len(items) > RESULTS:
            result["note"] = f"showing {RESULTS} of {len(items)} {what}; narrow the search"
        return result

    @toolbox.add(
        "glob",
        read_only=True,
        description="Find files by glob pattern (e.g. `**/*.py`), respecting .gitignore.",
        params={
            "pattern": {"type": "string", "description": "Glob pattern, relative to path"},
            "path": {"type": "string", "description": "Folder to search (default: .)"},
        },
        required=["pattern"],
    )
    def glob(args: dict[str, Any]) -> dict[str, Any]:
        root = resolve(args.get("path"))
        if not root.is_dir():
            return {"error": f"not a folder: {shown(root)}"}
        try:
            found = search.glob(root, args["pattern"]).paths
        except search.SearchError as exc:
            return {"error": str(exc)}
        result = capped(found, "files")
        result["files"] = [under(root, p) for p in result["files"]]
        return result

    @toolbox.add(
        "grep",
        read_only=True,
        description=(
            "Search file contents with a regular expression, respecting .gitignore and "
            ".ignore files. Returns `path:line: text` matches in path and line order; "
            "`include` filters files by glob (`*.py`, `*.{ts,tsx}`, `src/**/*.py`)."
        ),
        params={
            "pattern": {"type": "string", "description": "Python regular expression"},
            "path": {"type": "string", "description": "Folder or file to search (default: .)"},
            "include": {"type": "string", "description": "Only files matching this glob"},
            "ignore_case": {"type": "boolean", "default": False, "description": "Any case"},
        },
        required=["pattern"],
    )
    def grep(args: dict[str, Any]) -> dict[str, Any]:
        root = resolve(args.get("path"))
        if not root.exists():
            return {"error": f"not found: {shown(root)}"}
        try:
            found = search.grep(
                root,
                args["pattern"],
                include=args.get("include") or None,
                ignore_case=bool(args.get("ignore_case")),
                limit=RESULTS,
            )
        except search.PatternError as exc:
            return {"error": f"invalid regular expression: {exc}"}
        except search.SearchError as exc:
            return {"error": str(exc)}
        matches = [f"{under(root, m.path)}:{m.number}: {m.text}" for m in found.lines]
        result: dict[str, Any] = {"matches": matches, "count": found.count}
        if found.count > len(matches):
            result["note"] = f"showing {len(matches)} of {found.count} matches; narrow the search"
        return result

    @toolbox.add(
        "list",
        read_only=True,
        description="List a folder as a tree (files and folders), respecting .gitignore.",
        params={
            "path": {"type": "string", "description": "Folder to list (default: .)"},
            "depth": {"type": "integer", "minimum": 1, "default": 2, "description": "Levels"},
        },
    )
    def list_(args: dict[str, Any]) -> dict[str, Any]:
        root = resolve(args.get("path"))
        if not root.is_dir():
            return {"error": f"not a folder: {shown(root)}"}
        depth = int(args.get("depth") or 2)
        entries: set[str] = set()
        try:
            paths = search.files(root).paths
        except search.SearchError as exc:
            return {"error": str(exc)}
        for path in paths:
            parts = path.split("/")
            for level in range(1, min(len(parts), depth) + 1):
                entry = "/".join(parts[:level])
                entries.add(entry + ("/" if level < len(parts) else ""))
        return capped(sorted(entries, key=lambda e: e.split("/")), "entries")
