"""Readable views of tools, shared by ``tui-agent tools``, ``/tools`` and the tools panel."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .toolbox import Tool, Toolbox


@dataclass(frozen=True)
class ParamRow:
    name: str
    type: str
    required: bool
    default: str
    enum: str
    description: str


def type_label(prop: Any) -> str:
    if not isinstance(prop, dict):
        return "any"
    kind = prop.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array[{type_label(prop['items'])}]"
    if kind:
        return str(kind)
    for key in ("anyOf", "oneOf"):
        if isinstance(prop.get(key), list):
            return " | ".join(type_label(p) for p in prop[key])
    if "enum" in prop:
        return "enum"
    return "any"


def parameter_rows(tool: Tool) -> list[ParamRow]:
    rows = []
    for name, prop in tool.params.items():
        prop = prop if isinstance(prop, dict) else {}
        rows.append(
            ParamRow(
                name=name,
                type=type_label(prop),
                required=name in tool.required,
                default=json.dumps(prop["default"]) if "default" in prop else "",
                enum=", ".join(json.dumps(v) for v in prop.get("enum", [])),
                description=str(prop.get("description", "")),
            )
        )
    return rows


def hooks_label(toolbox: Toolbox, name: str) -> str:
    before, after = toolbox.hooks_for(name)
    return f"{before}/{after}"


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def tools_markdown(toolbox: Toolbox) -> str:
    if not toolbox.tools:
        return "No tools are registered."
    lines = ["| Tool | Aliases | Source | Hooks | Description |", "|---|---|---|---|---|"]
    for name in sorted(toolbox.tools):
        tool = toolbox.tools[name]
        lines.append(
            f"| {_cell(name)} | {_cell(', '.join(tool.aliases))} | {_cell(tool.source)} | "
            f"{hooks_label(toolbox, name)} | {_cell(first_line(tool.description))} |"
        )
    return "\n".join(lines)


def tool_markdown(tool: Tool) -> str:
    head = f"**{tool.name}**" + (f" (aliases: {', '.join(tool.aliases)})" if tool.aliases else "")
    parts = [head, "", tool.description or "(no description)", ""]
    rows = parameter_rows(tool)
    if not rows:
        parts.append("No parameters.")
    else:
        parts += [
            "| Parameter | Type | Required | Default | Enum | Description |",
            "|---|---|---|---|---|---|",
        ]
        for row in rows:
            parts.append(
                f"| {_cell(row.name)} | {_cell(row.type)} | {'yes' if row.required else 'no'} | "
                f"{_cell(row.default)} | {_cell(row.enum)} | {_cell(row.description)} |"
            )
    return "\n".join(parts)
