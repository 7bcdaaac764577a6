"""Settings and registrations: ``tui_agent.configure(fn)`` hands plugins a ``Config``.

Settings merge, later over earlier: user ``config.toml`` → project ``.tui-agent/config.toml``
(trusted folders only) → environment → command-line flags.
"""

from __future__ import annotations

import contextvars
import math
import os
import reprlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..util import paths
from ..util.secrets import SECRET_KEYS

SetupFn = Callable[[Any], Any]
ProviderFactory = Callable[..., Any]

ENV_SETTINGS = {
    "OPENAI_API_KEY": "api_key",
    "OPENAI_BASE_URL": "base_url",
    "TUI_AGENT_MODEL": "model",
}


@dataclass(frozen=True)
class Registration:
    name: str
    fn: Any
    origin: str
    path: str = ""


@dataclass(frozen=True)
class LoadProblem:
    """A file that failed to load, or a setup that raised: shown in the UI and on stderr."""

    path: str
    error: str
    setup: str = ""

    def __str__(self) -> str:
        where = f"{self.path} (setup {self.setup!r})" if self.setup else self.path
        return f"{where}: {self.error}"


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = dict(value) if isinstance(value, Mapping) else value
    return merged


class Config(Mapping[str, Any]):
    """Settings (a read-only mapping) plus the setups and providers plugins registered."""

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings: dict[str, Any] = dict(settings or {})
        self.setups: dict[str, Registration] = {}
        self.providers: dict[str, Registration] = {}
        self.files: list[Path] = []

    def __getitem__(self, key: str) -> Any:
        return self.settings[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.settings)

    def __len__(self) -> int:
        return len(self.settings)

    def __repr__(self) -> str:
        shown = {k: ("***" if k in SECRET_KEYS else v) for k, v in self.settings.items()}
        return f"Config({shown!r}, setups={list(self.setups)}, providers={list(self.providers)})"

    def setup(self, name: str, fn: SetupFn | None = None) -> Any:
        """Register ``fn(session)`` under ``name``; a later registration replaces the earlier."""
        if fn is None:

            def decorator(function: SetupFn) -> SetupFn:
                self.setup(name, function)
                return function

            return decorator
        if not callable(fn):
            raise TypeError(f"setup {name!r}: expected a callable, not {type(fn).__name__}")
        self.setups.pop(str(name), None)
        self.setups[str(name)] = Registration(str(name), fn, *_LOADING.get())
        return fn

    def provider(self, name: str, factory: ProviderFactory | None = None) -> Any:
        """Register an LLM provider factory under ``name`` (same name replaces)."""
        if factory is None:

            def decorator(function: ProviderFactory) -> ProviderFactory:
                self.provider(name, function)
                return function

            return decorator
        if not callable(factory):
            raise TypeError(f"provider {name!r}: expected a callable factory")
        self.providers[str(name)] = Registration(str(name), factory, *_LOADING.get())
        return factory

    def public_settings(self) -> dict[str, Any]:
        """Settings with secrets removed: what may be shown, logged or journaled."""
        return {k: v for k, v in self.settings.items() if k not in SECRET_KEYS}


_DEFAULT = Config()
_ACTIVE: contextvars.ContextVar[Config | None] = contextvars.ContextVar(
    "tui_agent_config", default=None
)
_LOADING: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "tui_agent_loading", default=("api", "")
)


def current_config() -> Config:
    """The config being loaded right now, or the process-wide one outside plugin loading."""
    active = _ACTIVE.get()
    return _DEFAULT if active is None else active


def default_config() -> Config:
    return _DEFAULT


def reset_default_config() -> None:
    """Forget programmatic registrations (tests)."""
    _DEFAULT.setups.clear()
    _DEFAULT.providers.clear()


def activate(config: Config) -> contextvars.Token[Config | None]:
    return _ACTIVE.set(config)


def deactivate(token: contextvars.Token[Config | None]) -> None:
    _ACTIVE.reset(token)


def loading(origin: str, path: str = "") -> contextvars.Token[tuple[str, str]]:
    return _LOADING.set((origin, path))


def done_loading(token: contextvars.Token[tuple[str, str]]) -> None:
    _LOADING.reset(token)


def setup(name: str, fn: SetupFn | None = None) -> Any:
    """``@tui_agent.setup("name")`` or ``tui_agent.setup("name", fn)``."""
    return current_config().setup(name, fn)


def configure(fn: Callable[[Config], Any]) -> Callable[[Config], Any]:
    """Call ``fn(config)`` now; usable as a decorator."""
    fn(current_config())
    return fn


def read_toml(path: Path) -> dict[str, Any]:
    """The file's table; ``ValueError`` (TOML, UTF-8 or nesting) or ``OSError`` if it is
    not one."""
    import tomllib  # only when there is a file: the first frame goes without it

    with path.open("rb") as handle:
        try:
            return tomllib.load(handle)
        except RecursionError:
            raise ValueError("arrays or tables nested too deep") from None


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


# Known settings: what each must be, said the way the problem message says it.
SETTING_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "provider": (_text, "a string"),
    "model": (_text, "a string"),
    "base_url": (_text, "a string (an http:// or https:// URL)"),
    "api_key": (_text, "a string"),
    "timeout": (lambda v: _number(v) and v > 0, "a number of seconds above 0"),
    "stream_idle_timeout": (lambda v: _number(v) and v > 0, "a number of seconds above 0"),
    "max_steps": (_count, "a whole number, 1 or more"),
    "max_subagents": (_count, "a whole number, 1 or more"),
    "retry_attempts": (_count, "a whole number, 1 or more"),
    "retry_base_delay": (lambda v: _number(v) and v >= 0, "a number of seconds, 0 or more"),
    "permission": (lambda v: isinstance(v, dict), "a table"),
    "mcp": (lambda v: isinstance(v, dict), "a table"),
    "context_window": (lambda v: _count(v) and v >= 1024, "a whole number of tokens, 1024 or more"),
    "compact_at": (
        lambda v: _number(v) and 0.1 <= v <= 0.95,
        "a share of the context window between 0.1 and 0.95",
    ),
    "models": (
        lambda v: isinstance(v, dict) and all(isinstance(t, dict) for t in v.values()),
        'a table of tables ([models."name"])',
    ),
    "checkpoints": (lambda v: isinstance(v, bool), "true or false"),
}

# Tables the other parts check themselves (``[sandbox]``, ``hooks``): each registers a
# checker that returns the table's problems, the first of which is said (the place of the
# first mistake: ``hooks.PreToolUse[0].timeout must be …``). A table no part registered
# is not checked. The session's extensions import the parts that register.
Validator = Callable[[Any], list[str]]
VALIDATORS: dict[str, Validator] = {}


def register_validator(table: str, fn: Validator) -> Validator:
    """Check the setting ``table`` with ``fn(value) -> problems`` (a later one replaces)."""
    VALIDATORS[table] = fn
    return fn


def validator(table: str) -> Callable[[Validator], Validator]:
    """``@config.validator("sandbox")``: ``register_validator`` as a decorator."""
    return lambda fn: register_validator(table, fn)


def _problem(key: str, value: Any, what: str) -> str:
    """What is wrong with ``key``'s value. Secrets are never quoted."""
    shown = "" if key in SECRET_KEYS else f", not {reprlib.repr(value)}"
    return f"{key} must be {what}{shown}"


def check_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``settings`` without the known keys whose value has the wrong type (the default
    applies instead), and one message per key dropped. Secrets are never quoted."""
    kept: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in settings.items():
        check = VALIDATORS.get(key)
        if check is not None:
            found = check(value)
            if found:
                problems.append(found[0])
            else:
                kept[key] = value
            continue
        rule = SETTING_RULES.get(key)
        if rule is None or rule[0](value):
            kept[key] = value
            continue
        problems.append(_problem(key, value, rule[1]))
    return kept, problems


def user_config_file() -> Path:
    return paths.user_config_dir() / "config.toml"


def project_config_file(project: Path) -> Path:
    return project / ".tui-agent" / "config.toml"


def env_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    env = os.environ if environ is None else environ
    return {key: env[var] for var, key in ENV_SETTINGS.items() if env.get(var)}


def default_provider(settings: Mapping[str, Any]) -> str:
    """``openai`` once a key or a base URL is configured, else the offline ``stub``."""
    if settings.get("provider"):
        return str(settings["provider"])
    if settings.get("api_key") or settings.get("base_url"):
        return "openai"
    return "stub"
