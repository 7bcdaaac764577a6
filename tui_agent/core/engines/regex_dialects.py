"""One regular expression, three engines: a Python ``re`` pattern rewritten for ripgrep's
Rust regex, PCRE2 (``git grep -P``) and Python itself, so each finds the same lines.

The grep tool's patterns are Python regular expressions (``re``); that is the reference.
Engines differ in syntax (Rust has no lookaround or backreferences; ``[[:alpha:]]`` is a
POSIX class in Rust and PCRE but ``[``, ``:``, ``a``… in Python; ``\\Z`` means different
things) and in what a line is (``git grep -P`` sees ``\\A`` as the start of the file).
Rather than hand a pattern over and hope, :func:`translate` reads the Python syntax and
writes it out again with only constructs the target reads the same way: every
punctuation literal as ``\\x{..}``, line anchors in the form each engine reads per line
(``\\A``/``\\Z``/``^``/``$``), named groups as numbered ones, flags that change
nothing on a single line (``s``, ``m``, ``u``) dropped. What a target cannot express
raises :class:`Untranslatable`, and the search falls back to an engine that can (Python
can express everything).

Matching is by line (no line holds a ``\\n``), so only *whether* a line matches matters,
never where or how greedily. Bytes that are not valid UTF-8 match nothing, not even ``.``
or ``[^a]`` (as in Rust and in PCRE2's invalid-UTF mode): the Python engine decodes them
to lone surrogates (``surrogateescape``) and the Python target keeps those out of ``.``,
``\\D``, ``\\W``, ``\\S`` and negated classes.

Known differences that remain, all outside ASCII: ``\\w``/``\\b`` differ between the three
for combining marks, connector punctuation and "other numbers" (``²``); Python's ``\\s``
also holds the ASCII separators ``\\x1c``–``\\x1f``; case folding of a few special letters.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Literal

Target = Literal["rust", "pcre", "python"]
TARGETS: tuple[Target, ...] = ("rust", "pcre", "python")
SURROGATES = "\\udc80-\\udcff"  # undecodable bytes under surrogateescape
NOT_UNDECODABLE = f"(?![{SURROGATES}])"
OCTAL = "01234567"


class Untranslatable(ValueError):
    """The target engine cannot express this pattern (or would read it differently)."""


class PatternError(ValueError):
    """Not a valid Python regular expression."""


@dataclass(frozen=True)
class Translation:
    pattern: str
    # a negative lookaround can hold on a line and fail in the whole text (the character
    # after the line is a newline), so the whole-text prefilter is off for these
    negative_lookaround: bool


def check(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """The pattern compiled by Python (the reference); :class:`PatternError` if invalid.
    Python warns about ``[[`` (a nested set in future versions); that is a literal today."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(str(exc)) from exc


def translate(pattern: str, target: Target, ignore_case: bool = False) -> Translation:
    """``pattern`` (valid Python, see :func:`check`) for ``target``; raises
    :class:`Untranslatable` when the target cannot take it."""
    check(pattern, ignore_case)
    prefix = "(?i)" if ignore_case else ""
    writer = _Writer(pattern, target)
    try:
        body = writer.run()
    except Untranslatable:
        if target != "python":
            raise
        # the verbose or ASCII flag: Python runs the pattern as written (undecodable
        # bytes may then match ``.``); no prefilter
        return Translation(prefix + pattern, True)
    return Translation(prefix + body, writer.negative_lookaround)


def _hex(char: str) -> str:
    return f"\\x{{{ord(char):x}}}"


class _Writer:
    """A single left-to-right pass over Python's syntax (sre_parse's rules), writing each
    piece out for the target. The input is known to be valid Python."""

    def __init__(self, pattern: str, target: Target) -> None:
        self.src = pattern
        self.i = 0
        self.target = target
        self.out: list[str] = []
        self.groups = 0
        self.names: dict[str, int] = {}
        self.negative_lookaround = False

    # -- helpers -----------------------------------------------------------------------

    def refuse(self, why: str) -> None:
        raise Untranslatable(f"{self.target} cannot take this pattern: {why}")

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.src[j] if j < len(self.src) else ""

    def literal(self, char: str) -> str:
        """One literal character, safe anywhere in the target (inside a class too)."""
        if char == "\n":
            if self.target != "python":
                self.refuse("a newline never occurs in a line (ripgrep refuses it)")
            return "\\n"
        if self.target == "python":
            return re.escape(char)
        if char.isascii() and char.isalnum():
            return char
        if char.isascii() or not char.isprintable():
            return _hex(char)
        return char

    # -- the pattern ---------------------------------------------------------------------

    def run(self) -> str:
        while self.i < len(self.src):
            self.item()
        return "".join(self.out)

    def item(self) -> None:
        char = self.src[self.i]
        if char == "\\":
            self.escape()
        elif char == "[":
            self.char_class()
        elif char == "(":
            self.group_open()
        elif char == ")":
            self.i += 1
            self.out.append(")")
        elif char == ".":
            self.i += 1
            self.out.append(f"[^\\n{SURROGATES}]" if self.target == "python" else ".")
        elif char in "^$":
            self.i += 1
            self.out.append(self.anchor(char))
        elif char == "|":
            self.i += 1
            self.out.append(char)
        elif char in "*+?":
            self.i += 1
            self.out.append(char)
            self.after_quantifier()
        elif char == "{":
            self.brace()
        else:
            self.i += 1
            self.out.append(self.literal(char))

    def anchor(self, char: str) -> str:
        """The start or end of the line. git grep -P reads ``\\A`` and ``\\z`` as the
        file's, so it gets ``^``/``$``; ripgrep finds nothing for ``$^`` on an empty line,
        so it gets ``\\A``/``\\z`` (which it reads per line)."""
        if self.target == "rust":
            return "\\A" if char == "^" else "\\z"
        return char

    def after_quantifier(self) -> None:
        if self.peek() == "?":
            self.i += 1
            self.out.append("?")
        elif self.peek() == "+":
            if self.target == "rust":
                self.refuse("possessive quantifiers")
            self.i += 1
            self.out.append("+")

    def brace(self) -> None:
        """``{m}``, ``{m,}``, ``{,n}``, ``{m,n}`` repeat; any other ``{`` is a literal."""
        match = re.match(r"\{(\d*)(?:(,)(\d*))?\}", self.src[self.i :])
        if match is None or (not match.group(1) and not match.group(2)):
            self.i += 1
            self.out.append(self.literal("{"))
            return
        low = int(match.group(1) or 0)
        high = match.group(3)
        if not match.group(2):
            text = f"{{{low}}}"
        elif high:
            text = f"{{{low},{int(high)}}}"
        else:
            text = f"{{{low},}}"
        self.i += match.end()
        self.out.append(text)
        self.after_quantifier()

    # -- escapes -------------------------------------------------------------------------

    def escape(self) -> None:
        """An escape outside a class."""
        code = self.peek(1)
        if code in "AZ":
            self.i += 2
            self.out.append(self.anchor("^" if code == "A" else "$"))
        elif code in "bB":
            self.i += 2
            # Python's \B never matches an empty string; Rust's and PCRE's match there
            empty_line = code == "B" and self.target == "python"
            self.out.append("(?:\\B|^$)" if empty_line else "\\" + code)
        elif code in "dwsDWS":
            self.i += 2
            if self.target == "python" and code in "DWS":
                self.out.append(f"[^\\{code.lower()}{SURROGATES}]")
            else:
                self.out.append("\\" + code)
        elif code in "123456789" and code and not self.octal_at(self.i + 1):
            digits = code
            if self.peek(2) and self.peek(2) in "0123456789":
                digits += self.peek(2)
            self.i += 1 + len(digits)
            self.backreference(int(digits))
        else:
            self.out.append(self.literal(self.escaped_char()))

    def octal_at(self, j: int) -> bool:
        """Python reads ``\\ddd`` with three octal digits as a character, not a group."""
        text = self.src[j : j + 3]
        return len(text) == 3 and all(c in OCTAL for c in text)

    def escaped_char(self) -> str:
        """The character an escape at ``self.i`` stands for (a literal one), advancing."""
        code = self.peek(1)
        simple = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
        if code in simple:
            self.i += 2
            return simple[code]
        if code == "x":
            self.i += 4
            return chr(int(self.src[self.i - 2 : self.i], 16))
        if code == "u":
            self.i += 6
            return chr(int(self.src[self.i - 4 : self.i], 16))
        if code == "U":
            self.i += 10
            return chr(int(self.src[self.i - 8 : self.i], 16))
        if code == "N":
            import unicodedata

            end = self.src.index("}", self.i)
            name = self.src[self.i + 3 : end]
            self.i = end + 1
            return unicodedata.lookup(name)
        if code in OCTAL:
            j = self.i + 1
            digits = ""
            while j < len(self.src) and len(digits) < 3 and self.src[j] in OCTAL:
                digits += self.src[j]
                j += 1
            self.i = j
            return chr(int(digits, 8))
        self.i += 2
        return code

    def backreference(self, number: int) -> None:
        if self.target == "rust":
            self.refuse("backreferences")
        self.out.append(f"\\g{{{number}}}" if self.target == "pcre" else f"(?:\\{number})")

    # -- groups --------------------------------------------------------------------------

    def group_open(self) -> None:
        if self.peek(1) != "?":
            self.i += 1
            self.groups += 1
            self.out.append("(")
            return
        rest = self.src[self.i + 2 :]
        if rest.startswith(":"):
            self.i += 3
            self.out.append("(?:")
        elif rest.startswith("P<"):
            end = self.src.index(">", self.i)
            self.groups += 1
            self.names[self.src[self.i + 4 : end]] = self.groups
            self.i = end + 1
            self.out.append("(")
        elif rest.startswith("P="):
            end = self.src.index(")", self.i)
            number = self.names[self.src[self.i + 4 : end]]
            self.i = end + 1
            self.backreference(number)
        elif rest.startswith("#"):
            self.i = self.src.index(")", self.i) + 1
        elif rest.startswith(("=", "!", "<=", "<!")):
            if self.target == "rust":
                self.refuse("lookaround")
            if rest.startswith(("!", "<!")):
                self.negative_lookaround = True
            opener = "(?" + rest[: 2 if rest.startswith("<") else 1]
            self.i += len(opener)
            self.out.append(opener)
        elif rest.startswith(">"):
            if self.target == "rust":
                self.refuse("atomic groups")
            self.i += 3
            self.out.append("(?>")
        elif rest.startswith("("):
            if self.target == "rust":
                self.refuse("conditional groups")
            end = self.src.index(")", self.i + 3)
            ref = self.src[self.i + 3 : end]
            number = int(ref) if ref.isdigit() else self.names[ref]
            self.i = end + 1
            self.out.append(f"(?({number})")
        else:
            self.flags()

    def flags(self) -> None:
        """``(?imsx)`` at the start, or scoped ``(?i-s:...)``: only ``i`` changes what a line
        matches; ``s``, ``m`` and ``u`` are dropped, ``a``, ``L`` and ``x`` refused."""
        match = re.match(r"\(\?([aiLmsux]*)(?:-([imsx]*))?([:)])", self.src[self.i :])
        assert match is not None  # valid Python: nothing else starts with "(?"
        on, off, end = match.group(1), match.group(2) or "", match.group(3)
        for letter in "aLx":
            if letter in on or letter in off:
                self.refuse(f"the {letter} flag")
        self.i += match.end()
        on_i, off_i = "i" if "i" in on else "", "-i" if "i" in off else ""
        if end == ")":
            if on_i:
                self.out.append("(?i)")
        elif on_i or off_i:
            self.out.append(f"(?{on_i}{off_i}:")
        else:
            self.out.append("(?:")

    # -- classes -------------------------------------------------------------------------

    def char_class(self) -> None:
        """``[...]`` by Python's rules: a ``]`` first is literal, ``-`` makes a range between
        two characters, ``[``, ``&&``, ``--``, ``~~`` and ``[:x:]`` are plain characters."""
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        parts: list[str] = []
        may_match_undecodable = negated
        first = True
        while True:
            char = self.peek()
            if char == "]" and not first:
                self.i += 1
                break
            first = False
            if char == "\\" and self.peek(1) in "dwsDWS":
                code = self.peek(1)
                self.i += 2
                parts.append("\\" + code)
                may_match_undecodable |= code in "DWS"
                continue
            low = self.class_char()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                high = self.class_char()
                parts.append(f"{self.literal(low)}-{self.literal(high)}")
            else:
                parts.append(self.literal(low))
        body = "[" + ("^" if negated else "") + "".join(parts)
        if self.target == "python" and negated:
            body += SURROGATES
        body += "]"
        if self.target == "python" and may_match_undecodable and not negated:
            body = NOT_UNDECODABLE + body
        self.out.append(body)

    def class_char(self) -> str:
        """One character inside a class (``\\b`` is a backspace there)."""
        char = self.peek()
        if char != "\\":
            self.i += 1
            return char
        if self.peek(1) == "b":
            self.i += 2
            return "\b"
        return self.escaped_char()  # "\\1" is chr(1) there
