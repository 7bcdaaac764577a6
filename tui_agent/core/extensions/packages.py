"""Plugin packages: installed distributions that name a plugin in the entry-point group
``tui_agent.plugins``, so a plugin can be shared with ``pip install`` as pytest's and
llm's are.

Finding them reads every installed distribution's ``entry_points.txt``, which grows with
the environment. The answer is kept for the process and looked for again only when
``sys.path`` or the modification time of one of its folders changes: installing,
upgrading or removing a package creates or deletes a ``.dist-info`` folder in its
site-packages folder, which changes that folder's time (importlib.metadata's own path
cache relies on the same). So ``/reload`` sees a package installed meanwhile, and costs
a few ``stat`` calls when nothing changed.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from dataclasses import dataclass
from typing import Any

GROUP = "tui_agent.plugins"


@dataclass(frozen=True)
class Package:
    """One entry point of the group in an installed distribution: ``name = "module"`` is
    loaded like a plugin file, ``name = "module:function"`` is called with the session
    like a setup."""

    distribution: str
    version: str
    name: str
    module: str
    attr: str | None

    @property
    def value(self) -> str:
        return f"{self.module}:{self.attr}" if self.attr else self.module

    @property
    def source(self) -> str:
        """What problems and ``tui-agent plugins`` name it by (a file's path, for files)."""
        return f"{self.distribution}=={self.version}"

    @property
    def origin(self) -> str:
        """The source its tools and commands carry (``bundled:files.py`` for a file)."""
        return f"package:{self.distribution}"


_found: tuple[tuple[tuple[str, int | None], ...], list[Package]] | None = None


def _stamp() -> tuple[tuple[str, int | None], ...]:
    stamps: list[tuple[str, int | None]] = []
    for entry in sys.path:
        folder = entry or os.getcwd()
        try:
            stamps.append((folder, os.stat(folder).st_mtime_ns))
        except OSError:
            stamps.append((folder, None))
    return tuple(stamps)


def installed() -> list[Package]:
    """The group's entry points, sorted by distribution and entry-point name (the order
    they load in); scanned again only when the environment may have changed."""
    global _found
    stamp = _stamp()
    if _found is None or _found[0] != stamp:
        _found = (stamp, scan())
    return list(_found[1])


def mentioned() -> bool:
    """Whether any installed distribution's ``entry_points.txt`` may name the group: read
    where ``importlib.metadata`` looks (the ``*.dist-info`` and ``*.egg-info`` folders of
    the folders on ``sys.path``, an ``.egg``'s ``EGG-INFO``). ``True`` whenever unsure (a
    zip or a finder of distributions of its own on the path, a file that cannot be read),
    so only a sure "no" spares ``importlib.metadata`` (~1 MB of modules: email, zipfile,
    csv…) to an environment without plugin packages, which is most of them."""
    marker = GROUP.encode()
    finders = [f for f in sys.meta_path if hasattr(f, "find_distributions")]
    if any(getattr(f, "__name__", None) != "PathFinder" for f in finders):
        return True
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return True  # a zip file: importlib.metadata reads inside it
        except OSError:
            continue
        egg = os.path.basename(root).lower().endswith(".egg")
        for child in children:
            low = child.lower()
            if not (low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info")):
                continue
            try:
                with open(os.path.join(root, child, "entry_points.txt"), "rb") as file:
                    if marker in file.read():
                        return True
            except (FileNotFoundError, NotADirectoryError):
                continue  # no entry points (an .egg-info may be a file)
            except OSError:
                return True
    return False


def scan() -> list[Package]:
    """Every entry point of the group, read from the installed distributions' metadata
    (nothing is imported)."""
    if not mentioned():
        return []
    from importlib import metadata

    found: list[Package] = []
    for entry in metadata.entry_points(group=GROUP):
        dist = entry.dist
        distribution = (dist.name if dist is not None else None) or "(unknown distribution)"
        version = (dist.version if dist is not None else None) or "?"
        found.append(Package(distribution, version, entry.name, entry.module, entry.attr))
    return sorted(found, key=lambda p: (p.distribution.lower(), p.name))


def run_module(name: str) -> types.ModuleType:
    """Import the module, or run it again when it was imported before (an earlier load),
    so that its top level, and with it its ``@tui_agent.setup`` and ``configure``
    registrations, runs on every load as a plugin file's does."""
    module = sys.modules.get(name)
    if module is None:
        return importlib.import_module(name)
    return importlib.reload(module)


def load_object(package: Package) -> Any:
    """What ``module:attr.path`` names (imported once; a function is called on every load)."""
    found: Any = importlib.import_module(package.module)
    for part in (package.attr or "").split("."):
        if part:
            found = getattr(found, part)
    return found
