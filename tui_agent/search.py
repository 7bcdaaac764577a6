"""Public: the file search behind the bundled ``glob``, ``grep`` and ``list`` tools.

``files(root)`` lists, ``glob(root, pattern)`` filters that listing, ``grep(root, pattern,
include=…, ignore_case=…, limit=…)`` finds lines (a Python regular expression). Each
uses ripgrep when it is installed, git inside a repository, else Python, with the same
results: the same ignore rules (``.gitignore``, ``.ignore``, ``.rgignore`` honoured inside
and outside git; ``.git``, ``node_modules``, ``.venv``, ``__pycache__``… skipped unless
the searched path is inside one), binary files and symlinks skipped, the same order (by
path, then line). ``engine="python"`` (or ``"rg"``, ``"git"``) forces one.
"""

from .core.engines.regex_dialects import PatternError
from .core.engines.search import (
    LINE_CUT,
    GrepResult,
    Line,
    Listing,
    SearchError,
    files,
    glob,
    grep,
)

__all__ = [
    "LINE_CUT",
    "GrepResult",
    "Line",
    "Listing",
    "PatternError",
    "SearchError",
    "files",
    "glob",
    "grep",
]
