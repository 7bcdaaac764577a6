"""What comes back from a server, read the same whichever ``mcp`` major is installed
(``mcp_major``, ``http_client``): input schemas with their references inlined
(``inline_refs``), results as the protocol's JSON (``wire``) made into tool results
(``convert``), and errors described for the user (``describe``).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import re
from typing import Any

from tui_agent.truncation import MAX_BYTES, keep_tail, save_output

REF = re.compile(r"#/(?:\$defs|definitions)/(.+)")
INSTALL = "pip install 'tui-agent[mcp]'"

# -- schemas and results ------------------------------------------------------------------


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace local ``$ref``s (``#/$defs/X``) by their definitions: the toolbox and the
    model get ``properties`` alone, without the schema's ``$defs``. Recursive models are
    cut (to ``{}``) after a few levels."""
    defs: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        if isinstance(schema.get(key), dict):
            defs.update(schema[key])

    def walk(node: Any, depth: int) -> Any:
        if isinstance(node, list):
            return [walk(item, depth) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            match = REF.fullmatch(ref)
            if match and match.group(1) in defs:
                rest = {k: v for k, v in node.items() if k != "$ref"}
                if depth >= 8:
                    return walk(rest, depth)
                target = defs[match.group(1)]
                merged = {**target, **rest} if isinstance(target, dict) else rest
                return walk(merged, depth + 1)
        return {key: walk(value, depth) for key, value in node.items()}

    result = walk(schema, 0)
    return result if isinstance(result, dict) else {}


def wire(model: Any) -> dict[str, Any]:
    """A protocol object from the ``mcp`` package (a pydantic model) as the protocol's JSON:
    camelCase names whichever major made it (see the module docstring)."""
    if isinstance(model, dict):
        return model
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type", "")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(block.get("data") or "") * 3 // 4
        return f"[{kind}: {block.get('mimeType', '?')}, about {size} bytes, not shown]"
    if kind == "resource":
        resource = block.get("resource") or {}
        text = resource.get("text")
        if text is not None:
            return str(text)
        mime = resource.get("mimeType") or "?"
        return f"[binary resource {resource.get('uri', '?')} ({mime})]"
    if kind == "resource_link":
        return f"[resource {block.get('uri', '?')}: {block.get('name', '')}]"
    return f"[{kind or 'unknown'} content, not shown]"


def mirrors(texts: list[str], structured: Any) -> bool:
    """Is the text content the structured content again? The MCP spec (2025-06-18, tool
    results) asks a tool that returns ``structuredContent`` to return it serialized as JSON
    in a text block too, for older clients. Accepted as the same: the text parsed as JSON
    (one block, or one value per block), or the raw text; and, since FastMCP wraps a value
    that is not an object as ``{"result": value}``, that value."""
    if not texts:
        return False
    joined = "\n".join(texts)

    def parsed(text: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            return text

    candidates = [parsed(joined), joined, [parsed(t) for t in texts]]
    wrapped = isinstance(structured, dict) and list(structured) == ["result"]
    return any(
        value == structured or (wrapped and value == structured["result"]) for value in candidates
    )


def convert(result: Any, label: str) -> dict[str, Any]:
    """A ``CallToolResult`` (a model, or its protocol JSON) as a tool result: text blocks
    joined (long text truncated) as ``output``; ``isError`` → ``{"error": …}``.

    ``structuredContent`` reaches the model once: when the text mirrors it (what the spec
    asks of servers, see ``mirrors``) the text alone is sent; without text, the structure is
    the ``output`` (as JSON, truncated like text); a structure that says something the text
    does not is kept as ``structured_content`` (saved to a file instead when it is big or
    the text had to be cut)."""
    data = wire(result)
    blocks = [block for block in data.get("content") or [] if isinstance(block, dict)]
    structured = data.get("structuredContent")
    texts = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
    if structured is not None and not blocks:
        text = json.dumps(structured, ensure_ascii=False, default=str)
        structured = None
    else:
        text = "\n".join(_block_text(block) for block in blocks)
        if structured is not None and mirrors(texts, structured):
            structured = None
    payload = keep_tail(text, f"mcp-{label}")
    if structured is not None:
        dumped = json.dumps(structured, ensure_ascii=False, default=str)
        small = len(dumped.encode("utf-8", errors="replace")) <= MAX_BYTES
        if small and not payload.get("truncated"):
            payload["structured_content"] = structured
        else:
            payload["structured_content_file"] = str(save_output(dumped, f"mcp-{label}", "json"))
    if data.get("isError"):
        payload["error"] = payload.pop("output") or "the tool reported an error"
    return payload


def offending_line(exc: BaseException) -> str:
    """The stdout line the ``mcp`` client could not read as JSON-RPC, from its parse error
    (a pydantic ``ValidationError`` carries the input)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            items = errors()
        except Exception:
            items = []
        for item in items if isinstance(items, list) else []:
            value = item.get("input") if isinstance(item, dict) else None
            if isinstance(value, str):
                return value
            if isinstance(value, dict | list):
                return json.dumps(value, ensure_ascii=False, default=str)
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _quote(line: str, limit: int = 200) -> str:
    line = line.strip()
    return json.dumps(line if len(line) <= limit else line[:limit] + "…", ensure_ascii=False)


def describe(exc: BaseException) -> str:
    """One line for an exception, digging the real cause out of exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        leaves = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (leaves or list(exc.exceptions))[0]
    if _connection_lost(exc):  # one wording for the error code and the stream errors
        return "the connection closed"
    error = getattr(exc, "error", None)
    if error is not None and hasattr(error, "message"):  # McpError (1.x), MCPError (2.x)
        return str(error.message)
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _connection_lost(exc: BaseException) -> bool:
    error = getattr(exc, "error", None)
    if error is not None and getattr(error, "code", None) == -32000:  # CONNECTION_CLOSED
        return True
    names = {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError"}
    return type(exc).__name__ in names


def mcp_major() -> int:
    """The installed ``mcp`` package's major version (1 when it cannot be told)."""
    from importlib import metadata  # with the first HTTP server: not at the plugin's load

    try:
        return int(metadata.version("mcp").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return 1


def http_client(headers: dict[str, str]) -> Any:
    """The HTTP client for a streamable HTTP server: from the library the installed ``mcp``
    speaks (2.x: ``httpx2``, 1.x: ``httpx``), with the timeouts the ``mcp`` package uses."""
    httpx = importlib.import_module("httpx2" if mcp_major() >= 2 else "httpx")
    return httpx.AsyncClient(headers=headers or None, timeout=httpx.Timeout(30, read=300))
