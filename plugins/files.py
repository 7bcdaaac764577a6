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
from tui_agent import search

READ_LIMIT = 2000
LINE_CUT = 2000
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

    @toolbox.add(
        "read",
        read_only=True,
        description=(
            "Read a text file. Returns numbered lines (from `offset`, at most `limit`, 2000 by "
            "default); very long lines are cut. Refuses binary files."
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
            return {"error": f"{shown(path)} is a folder; use the list tool"}
        if not path.is_file():
            close = suggestions(path)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            return {"error": f"file not found: {shown(path)}.{hint}"}
        if is_binary(path):
            return {"error": f"{shown(path)} is a binary file; not reading it"}
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        offset = int(args.get("offset") or 1)
        limit = int(args.get("limit") or READ_LIMIT)
        chosen = lines[offset - 1 : offset - 1 + limit]
        if offset > 1 and not chosen:
            return {
                "path": shown(path),
                "content": "",
                "total_lines": len(lines),
                "note": f"offset {offset} is past the end: the file has {len(lines)} lines",
            }
        out = []
        for number, line in enumerate(chosen, offset):
            if len(line) > LINE_CUT:
                line = line[:LINE_CUT] + f"… [{len(line) - LINE_CUT} characters cut]"
            out.append(f"{number:>6}\t{line}")
        result: dict[str, Any] = {
            "path": shown(path),
            "content": "\n".join(out),
            "total_lines": len(lines),
        }
        last = offset - 1 + len(chosen)
        if last < len(lines):
            result["note"] = f"showing lines {offset}-{last} of {len(lines)}; use offset to read on"
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
            "Replace exact text in a file. `old` must occur once (or set replace_all); "
            "returns a unified diff."
        ),
        params={
            "path": {"type": "string", "description": "File to change"},
            "old": {"type": "string", "description": "Exact text to replace"},
            "new": {"type": "string", "description": "Replacement text"},
            "replace_all": {"type": "boolean", "default": False, "description": "Every occurrence"},
        },
        required=["path", "old", "new"],
    )
    def edit(args: dict[str, Any]) -> dict[str, Any]:
        path = resolve(args["path"])
        if not path.is_file():
            return {"error": f"file not found: {shown(path)}"}
        old, new = args["old"], args["new"]
        if old == "":
            return {"error": "old is empty; use write to create or replace a whole file"}
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return {"error": f"{shown(path)} is not UTF-8 text; not editing it"}
        if "\r\n" in text and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
        if count == 0:
            hint = ""
            if old.strip() and old.strip() in text:
                hint = " (it does occur with different surrounding whitespace)"
            return {"error": f"old text not found in {shown(path)}{hint}"}
        if count > 1 and not args.get("replace_all"):
            return {
                "error": f"old text occurs {count} times in {shown(path)}; include more context "
                "to make it unique, or set replace_all"
            }
        updated = text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1)
        path.write_bytes(updated.encode("utf-8"))
        diff = "".join(
            difflib.unified_diff(
                text.splitlines(keepends=True),
                updated.splitlines(keepends=True),
                fromfile=f"a/{shown(path)}",
                tofile=f"b/{shown(path)}",
            )
        )
        return {
            "path": shown(path),
            "replacements": count if args.get("replace_all") else 1,
            "diff": diff,
        }

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
