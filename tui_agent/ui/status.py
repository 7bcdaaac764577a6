"""The status under the prompt, shortened by priority to the prompt's width: beside the
tools panel (or in a narrow terminal) the parts that matter least give way first, instead
of the border cutting the line wherever it ends ("per…")."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

SEPARATOR = " · "


@dataclass(frozen=True)
class StatusPart:
    """One part of the status: its texts from the longest to the shortest ("" leaves the
    part out) and, for each text but the last, what showing it rather than the next is
    worth. Worth is compared across parts: while the line is too wide, the part whose text
    is worth least moves on to its next one. A part with one text always stays."""

    texts: tuple[str, ...]
    worth: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.worth) != len(self.texts) - 1:
            raise ValueError("StatusPart needs one worth for each text but the last")


def fit_status(parts: list[StatusPart], width: int) -> str:
    """The status line for ``width`` cells: every part at its longest if that fits, else
    shortened by worth, least first. What still does not fit (the parts that always
    stay) is left for the border to cut."""
    chosen = [0] * len(parts)

    def line() -> str:
        return SEPARATOR.join(t for p, n in zip(parts, chosen, strict=True) if (t := p.texts[n]))

    while cell_len(line()) > width:
        shorter = [
            (part.worth[n], i)
            for i, (part, n) in enumerate(zip(parts, chosen, strict=True))
            if n < len(part.worth)
        ]
        if not shorter:
            break
        chosen[min(shorter)[1]] += 1
    return line()
