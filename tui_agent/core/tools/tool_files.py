"""Custom tool files (opencode/Dropstone style): ``.tui-agent/tools/*.py``.

Each ``tool(...)`` object at a file's top level becomes a tool, and so does each plain
dict with ``description``, ``args`` and ``execute`` (the page's plain-object export). The
attribute ``default``, or the one named like the file, takes the file's name; any other
takes ``<file>_<attr>``.

A file in a tool folder is imported only if it imports ``tui_agent`` or holds a top-level
dict literal shaped like a tool (checked on its syntax tree before it runs): the Dropstone
page keeps helper scripts beside the tools that run them, and such a script must not run
at load time with tui-agent's own ``sys.argv``.
"""

from __future__ import annotations

import ast
import copy
import enum as enum_module
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from ..protocol.context import ToolContext
from ..util.signatures import leading_arguments
from . import schema as schema_module
from .schema import Schema, make_nullable, property_json

Execute = Callable[..., Any]
_NO_DEFAULT: Any = inspect.Parameter.empty


@dataclass
class ToolSpec:
    """What ``tool(...)`` returns. Still callable like the function it wraps."""

    execute: Execute
    description: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    inferred: bool = False
    kwarg_names: frozenset[str] = frozenset()
    takes_var_kwargs: bool = False
    context_param: str | None = None
    with_context: bool = False

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.execute(*args, **kwargs)

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.execute)

    def defaults(self) -> dict[str, Any]:
        return {
            k: v["default"]
            for k, v in self.params.items()
            if isinstance(v, dict) and "default" in v
        }

    def handler(self) -> Callable[..., Any]:
        """A toolbox handler ``(args, context)``; sync stays sync so the toolbox threads it."""
        defaults = self.defaults()

        def prepare(
            args: Mapping[str, Any], context: ToolContext
        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
            filled = {**copy.deepcopy(defaults), **args}
            if not self.inferred:
                return ((filled, context) if self.with_context else (filled,)), {}
            kwargs = (
                dict(filled)
                if self.takes_var_kwargs
                else {k: v for k, v in filled.items() if k in self.kwarg_names}
            )
            if self.context_param is not None:
                kwargs[self.context_param] = context
            return (), kwargs

        if self.is_async:

            async def run_async(args: Mapping[str, Any], context: ToolContext) -> Any:
                call_args, call_kwargs = prepare(args, context)
                return await self.execute(*call_args, **call_kwargs)

            return run_async

        def run_sync(args: Mapping[str, Any], context: ToolContext) -> Any:
            call_args, call_kwargs = prepare(args, context)
            return self.execute(*call_args, **call_kwargs)

        return run_sync


def _is_context_annotation(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if isinstance(annotation, str):
        return "ToolContext" in annotation
    if get_origin(annotation) in (Union, types.UnionType, Annotated):
        return any(_is_context_annotation(a) for a in get_args(annotation))
    return False


def _json_default(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_json_default(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_default(v) for k, v in value.items())
    return False


def type_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for a Python type hint (str, int, float, bool, list[T], dict, Literal, Enum…)."""
    if annotation is _NO_DEFAULT or annotation is Any:
        return {}
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *meta = get_args(annotation)
        result = type_schema(base)
        for item in meta:
            if isinstance(item, str):
                result["description"] = item
            elif isinstance(item, Schema):
                result.update(item.to_json())
            elif isinstance(item, Mapping):
                result.update(item)
        return result
    if annotation is str or annotation is Path:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is type(None):
        return {"type": "null"}
    if annotation in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        args = get_args(annotation)
        result = {"type": "array"}
        if args and args[0] is not Ellipsis:
            result["items"] = type_schema(args[0])
        return result
    if annotation is dict or origin is dict:
        return {"type": "object"}
    if origin is Literal:
        values = list(get_args(annotation))
        if all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
        return {"enum": values}
    if isinstance(annotation, type) and issubclass(annotation, enum_module.Enum):
        return {"enum": [member.value for member in annotation]}
    if origin is Union or origin is types.UnionType:
        members = [a for a in get_args(annotation) if a is not type(None)]
        nullable = len(members) != len(get_args(annotation))
        if len(members) == 1:
            inner = type_schema(members[0])
            return make_nullable(inner) if nullable and inner else inner
        options = [type_schema(m) for m in members]
        if nullable:
            options.append({"type": "null"})
        return {"anyOf": options}
    return {}


def _infer(fn: Execute) -> tuple[dict[str, Any], list[str], frozenset[str], bool, str | None]:
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = {}
    params: dict[str, Any] = {}
    required: list[str] = []
    names: set[str] = set()
    var_kwargs = False
    context_param: str | None = None
    for param in inspect.signature(fn).parameters.values():
        if param.kind is param.VAR_KEYWORD:
            var_kwargs = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        annotation = hints.get(param.name, param.annotation)
        if param.name == "context" or _is_context_annotation(annotation):
            context_param = param.name
            continue
        prop = type_schema(annotation)
        if param.default is not _NO_DEFAULT:
            if _json_default(param.default) and param.default is not None:
                prop["default"] = (
                    list(param.default) if isinstance(param.default, tuple) else param.default
                )
        else:
            required.append(param.name)
        params[param.name] = prop
        names.add(param.name)
    return params, required, frozenset(names), var_kwargs, context_param


def _build(fn: Execute, description: str | None, args: Mapping[str, Any] | None) -> ToolSpec:
    if not callable(fn):
        raise TypeError(f"tool execute must be callable, not {type(fn).__name__}")
    text = description if description is not None else inspect.getdoc(fn) or ""
    if args is not None:
        params: dict[str, Any] = {}
        required: list[str] = []
        for key, value in args.items():
            params[key], needed = property_json(value)
            if needed:
                required.append(key)
        with_context = leading_arguments(fn, 2) == 2  # execute(args, context)
        return ToolSpec(fn, text, params, required, inferred=False, with_context=with_context)
    params, required, names, var_kwargs, context_param = _infer(fn)
    spec = ToolSpec(
        fn,
        text,
        params,
        required,
        inferred=True,
        kwarg_names=names,
        takes_var_kwargs=var_kwargs,
        context_param=context_param,
    )
    functools.update_wrapper(spec, fn, updated=())
    return spec


@typing.overload
def tool(fn: Execute, /) -> ToolSpec: ...


@typing.overload
def tool(
    fn: None = None,
    /,
    *,
    description: str | None = None,
    args: Mapping[str, Any] | None = None,
    execute: None = None,
) -> Callable[[Execute], ToolSpec]: ...


@typing.overload
def tool(
    fn: None = None,
    /,
    *,
    description: str | None = None,
    args: Mapping[str, Any] | None = None,
    execute: Execute,
) -> ToolSpec: ...


def tool(
    fn: Execute | None = None,
    /,
    *,
    description: str | None = None,
    args: Mapping[str, Any] | None = None,
    execute: Execute | None = None,
) -> ToolSpec | Callable[[Execute], ToolSpec]:
    """Define a custom tool: ``@tool``, ``@tool(description=..., args=...)`` or
    ``tool(description=..., args=..., execute=fn)``.

    With ``args`` (schema builders or JSON-schema dicts) the function gets ``(args)`` or
    ``(args, context)``. Without, the schema comes from its signature and it gets keyword
    arguments (a parameter named ``context`` receives the ``ToolContext``).
    """
    target = fn or execute
    if target is not None:
        return _build(target, description, args)

    def decorator(function: Execute) -> ToolSpec:
        return _build(function, description, args)

    return decorator


tool.schema = schema_module  # type: ignore[attr-defined]


def tool_names(
    stem: str, namespace: Mapping[str, Any], problems: list[str] | None = None
) -> list[tuple[str, ToolSpec]]:
    """``(tool name, spec)`` for each tool at a module's top level, in file order: each
    ``tool(...)`` object, and each plain dict with ``"description"`` and a callable
    ``"execute"`` (or ``"handler"``), the Dropstone page's plain-object export
    (``export default {description, args, execute}``), made into a ``tool(...)`` here.

    A dict tool whose ``args`` cannot be read is left out, with why in ``problems``."""
    found: list[tuple[str, ToolSpec]] = []
    for attr, value in namespace.items():
        if attr.startswith("_"):
            continue
        if not isinstance(value, ToolSpec):
            if not isinstance(value, Mapping) or not _mapping_is_tool_shaped(value):
                continue
            try:
                value = plain_tool(value)
            except (TypeError, ValueError) as exc:
                if problems is not None:
                    problems.append(f"`{attr}`: {exc}")
                continue
        name = stem if attr in ("default", stem) else f"{stem}_{attr}"
        found.append((name, value))
    return found


def plain_tool(value: Mapping[str, Any]) -> ToolSpec:
    """A tool from a plain dict ``{"description", "args", "execute"}`` (``args`` optional,
    ``{}`` when missing: the function gets ``(args)`` or ``(args, context)`` as the page's
    ``execute(args, context)`` does)."""
    execute = value.get("execute")
    if not callable(execute):
        execute = value.get("handler")
    description = value.get("description")
    if not isinstance(description, str):
        raise TypeError(f"description must be a string, not {type(description).__name__}")
    args = value.get("args")
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise TypeError(f"args must be a dict, not {type(args).__name__}")
    assert execute is not None
    return _build(execute, description, args)


# -- tool files written for opencode or Dropstone (TypeScript/JavaScript) --------------------

SCRIPT_SUFFIXES = (".ts", ".js", ".mts", ".mjs", ".cts", ".cjs", ".tsx", ".jsx")
# opencode's (and Dropstone's) tool folders in a project: TypeScript, never loaded here
OPENCODE_TOOL_FOLDERS = (".opencode/tool", ".opencode/tools", ".dropstone/tools")
PORTING = "README, Custom tool files: Porting an opencode tool"


def script_files(folder: Path) -> list[Path]:
    """TypeScript/JavaScript files in a folder (``*.d.ts`` too), sorted; dot files skipped."""
    try:
        return sorted(
            (
                p
                for p in folder.iterdir()
                if p.suffix in SCRIPT_SUFFIXES and not p.name.startswith(".") and p.is_file()
            ),
            key=lambda p: p.name,
        )
    except OSError:
        return []


def script_note(files: list[str]) -> str:
    """What a load says once about tool files it cannot load (``files`` as shown)."""
    they = "it was" if len(files) == 1 else "they were"
    return (
        f"Not loaded: {', '.join(files)} ({they} written for opencode or Dropstone). "
        "Tool files here are Python: .tui-agent/tools/NAME.py with "
        "`from tui_agent import tool`; each opencode construct has its Python form in the "
        f"{PORTING}."
    )


# -- which files are tool files, and what only looks like a tool ----------------------------

PACKAGE = "tui_agent"
_EXECUTE_KEYS = ("execute", "handler")


@dataclass(frozen=True)
class Scan:
    """A tool file read before it runs: its syntax tree (compiled from, so parsed once),
    whether it imports ``tui_agent``, and the top-level dict literals shaped like a tool
    (looked for only in files that do not import ``tui_agent``). A file with either is
    imported (``is_tool_file``); any other is a helper script, never run at load time."""

    tree: ast.Module
    imports_package: bool
    dict_shapes: tuple[str, ...] = ()

    @property
    def is_tool_file(self) -> bool:
        return self.imports_package or bool(self.dict_shapes)


def scan(source: bytes, filename: str) -> Scan:
    """Raises ``SyntaxError`` (or ``ValueError``) like ``compile`` for a file that is not Python."""
    tree = ast.parse(source, filename)
    if PACKAGE.encode() in source and imports_package(tree):
        return Scan(tree, True)
    return Scan(tree, False, static_dict_shapes(tree))


def imports_package(tree: ast.Module) -> bool:
    """Any ``import tui_agent[.x] [as y]`` or ``from tui_agent[.x] import …`` anywhere in the
    file (``tool`` is reachable only through them). A mention in a string or comment is not.
    The top level is looked at first: that is where nearly every file imports."""
    return any(map(_imports, tree.body)) or any(map(_imports, ast.walk(tree)))


def _imports(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(_in_package(alias.name) for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and node.module is not None and _in_package(node.module)
    return False


def _in_package(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def static_dict_shapes(tree: ast.Module) -> tuple[str, ...]:
    """Public top-level names assigned a dict literal (``{...}`` or ``dict(...)``) with a
    ``"description"`` key and an ``"execute"``/``"handler"`` key whose value is a name, an
    attribute or a lambda: the Dropstone page's plain-object export, written in a file that
    does not import ``tui_agent`` (its args as plain JSON-schema dicts): a tool file."""
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not _literal_is_tool_shaped(value):
            continue
        found += [t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_")]
    return tuple(found)


def _literal_is_tool_shaped(value: ast.expr) -> bool:
    entries: dict[str, ast.expr] = {}
    if isinstance(value, ast.Dict):
        for key, item in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries[key.value] = item
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        if value.func.id != "dict":
            return False
        entries = {k.arg: k.value for k in value.keywords if k.arg is not None}
    return "description" in entries and any(
        isinstance(entries.get(key), (ast.Name, ast.Attribute, ast.Lambda)) for key in _EXECUTE_KEYS
    )


@dataclass(frozen=True)
class Lookalike:
    """A top-level function shaped like a tool but not made with ``tool(...)``: ignored,
    so reported (a user who wrote it expected a tool)."""

    attr: str
    kind: Literal["function"] = "function"

    def message(self) -> str:
        return (
            f"`{self.attr}` is a plain function, not a tool, so it was ignored: "
            f"wrap it with tui_agent.tool(...) (from tui_agent import tool; "
            f"put @tool(description=...) above def {self.attr})"
        )


def lookalikes(stem: str, namespace: Mapping[str, Any]) -> list[Lookalike]:
    """What a loaded tool file holds that looks like a tool and is not one, in file order:
    a plain function defined in the file and named ``default`` or like the file, when no
    tool already takes the file's name (a forgotten ``@tool``).

    Names starting with ``_`` are private and never reported; nor are other functions,
    classes, constants, imported names, or dicts (a dict shaped like a tool is one)."""
    module_name = namespace.get("__name__")
    named = any(
        isinstance(value, ToolSpec)
        or (isinstance(value, Mapping) and _mapping_is_tool_shaped(value))
        for value in (namespace.get("default"), namespace.get(stem))
    )
    found: list[Lookalike] = []
    for attr, value in namespace.items():
        if attr.startswith("_") or isinstance(value, ToolSpec):
            continue
        if (
            attr in ("default", stem)
            and not named
            and inspect.isfunction(value)
            and value.__module__ == module_name
        ):
            found.append(Lookalike(attr))
    return found


def _mapping_is_tool_shaped(value: Mapping[Any, Any]) -> bool:
    try:
        return "description" in value and any(callable(value.get(key)) for key in _EXECUTE_KEYS)
    except Exception:  # an odd Mapping whose lookups raise is not a tool either
        return False
