"""``edit``: a corpus of near-miss edits through the bundled ``edit`` tool (issue 19).

python bench/edit_corpus.py          # alone, prints the figures as JSON (misses on stderr)

Each case is a file, the call a model made and the file expected after it, or None when
the call must be refused. The near misses are the shapes models get wrong (tabs for
spaces, a missing trailing space, another indentation level, CRLF, escaped quotes, a block
whose middle drifted, typographic quotes…); exact calls are the control; calls whose
``old`` has no plausible target, or two, must be refused. ``wrong`` counts applied calls
whose file differs from the expected one: an edit in the wrong place or a bad re-indent.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import Sandbox, log


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # "near" (one plausible target), "exact" (control), "none", "two"
    before: str
    call: dict[str, Any]
    after: str | None  # None: must be refused


CASES: list[Case] = []


def case(name: str, kind: str, before: str, call: dict[str, Any], after: str | None) -> None:
    CASES.append(Case(name, kind, before, call, after))


def near(name: str, before: str, old: str, new: str, after: str) -> None:
    case(name, "near", before, {"old": old, "new": new}, after)


# -- near misses: one plausible target ------------------------------------------------------

GO = "func main() {\n\tx := 1\n\tif x > 0 {\n\t\tfmt.Println(x)\n\t}\n}\n"
near(
    "tabs-for-spaces",
    GO,
    "    if x > 0 {\n        fmt.Println(x)\n    }\n",
    "    if x > 0 {\n        fmt.Println(x + 1)\n    }\n",
    GO.replace("Println(x)", "Println(x + 1)"),
)
PY = (
    "def total(items):\n    result = 0\n    for item in items:\n        result += item\n"
    "    return result\n"
)
near(
    "spaces-for-tabs",
    PY,
    "\tfor item in items:\n\t\tresult += item\n",
    "\tfor item in items:\n\t\tresult += item * 2\n",
    PY.replace("+= item\n", "+= item * 2\n"),
)
near(
    "missing-trailing-space",
    "name = 'a'   \nsize = 3\nkind = 'b'\n",
    "name = 'a'\nsize = 3\n",
    "name = 'a'\nsize = 4\n",
    "name = 'a'   \nsize = 4\nkind = 'b'\n",
)
near(
    "extra-trailing-space",
    "alpha()\nbeta()\ngamma()\n",
    "beta()  \ngamma() \n",
    "beta(1)\ngamma()\n",
    "alpha()\nbeta(1)\ngamma()\n",
)
CLS = (
    "class Cart:\n    def add(self, item):\n        self.items.append(item)\n"
    "        self.count += 1\n\n    def clear(self):\n        self.items = []\n"
)
near(
    "one-level-too-shallow",
    CLS,
    "    self.items.append(item)\n    self.count += 1\n",
    "    self.items.append(item)\n    self.count += 1\n    self.changed = True\n",
    CLS.replace("count += 1\n", "count += 1\n        self.changed = True\n"),
)
near(
    "dedented-to-zero",
    CLS,
    "def add(self, item):\n    self.items.append(item)\n    self.count += 1\n",
    "def add(self, item):\n    if item is None:\n        return\n    self.items.append(item)\n"
    "    self.count += 1\n",
    CLS.replace(
        "    def add(self, item):\n",
        "    def add(self, item):\n        if item is None:\n            return\n",
    ),
)
near(
    "two-space-model-four-space-file",
    CLS,
    "  def clear(self):\n    self.items = []\n",
    "  def clear(self):\n    self.items = []\n    self.count = 0\n",
    CLS + "        self.count = 0\n",
)
JS = "function f(a) {\n  if (a) {\n    return 1;\n  }\n  return 0;\n}\n"
near(
    "four-space-model-two-space-file",
    JS,
    "    if (a) {\n        return 1;\n    }\n",
    "    if (a) {\n        log(a);\n        return 1;\n    }\n",
    JS.replace("    return 1;\n", "    log(a);\n    return 1;\n"),
)
WIN = "line one\r\nline two\r\nline three\r\n"
near(
    "crlf-file-lf-old",
    WIN,
    "line two\nline three\n",
    "line 2\nline three\n",
    "line one\r\nline 2\r\nline three\r\n",
)
near(
    "lf-file-crlf-old",
    "a = 1\nb = 2\nc = 3\n",
    "a = 1\r\nb = 2\r\n",
    "a = 1\r\nb = 20\r\n",
    "a = 1\nb = 20\nc = 3\n",
)
QUOTED = 'msg = "hello"\nprint(msg)\n'
near(
    "escaped-double-quotes",
    QUOTED,
    'msg = \\"hello\\"',
    'msg = \\"hello, world\\"',
    'msg = "hello, world"\nprint(msg)\n',
)
near(
    "escaped-single-quotes",
    "name = 'x'\nother = 1\n",
    "name = \\'x\\'",
    "name = \\'y\\'",
    "name = 'y'\nother = 1\n",
)
near(
    "literal-newlines",
    "def f():\n    a = 1\n    return a\n",
    "    a = 1\\n    return a",
    "    a = 2\\n    return a",
    "def f():\n    a = 2\n    return a\n",
)
DRIFT = (
    "def load(path):\n    with open(path) as handle:\n        data = handle.read()\n"
    "    return parse(data)\n"
)
near(
    "drifted-middle-edit-last",
    DRIFT,
    "def load(path):\n    with open(path) as fh:\n        data = fh.read()\n"
    "    return parse(data)\n",
    "def load(path):\n    with open(path) as fh:\n        data = fh.read()\n"
    "    return parse(data, strict=True)\n",
    DRIFT.replace("parse(data)", "parse(data, strict=True)"),
)
DRIFT2 = (
    "for (let i = 0; i < n; i++) {\n  total += values[i];\n  count++;\n  seen.add(values[i]);\n}\n"
)
near(
    "drifted-middle-edit-first",
    DRIFT2,
    "for (let i = 0; i < n; i++) {\n  total += values[i];\n  count += 1;\n"
    "  seen.add(values[i]);\n}\n",
    "for (let i = 0; i < values.length; i++) {\n  total += values[i];\n  count += 1;\n"
    "  seen.add(values[i]);\n}\n",
    DRIFT2.replace("i < n", "i < values.length"),
)
near(
    "drifted-comment",
    "if ready:\n    start()  # go\n    wait()\n    stop()\n",
    "if ready:\n    start()\n    wait()\n    stop()\n",
    "if ready:\n    start()\n    wait(5)\n    stop()\n",
    "if ready:\n    start()  # go\n    wait(5)\n    stop()\n",
)
near(
    "inner-whitespace",
    "x = 1\ny = 2\n",
    "x  =  1\n",
    "x = 10\n",
    "x = 10\ny = 2\n",
)
near(
    "spacing-around-punctuation",
    "result = compute(a, b)\nprint(result)\n",
    "result = compute( a,b )\n",
    "result = compute(a, b, c)\n",
    "result = compute(a, b, c)\nprint(result)\n",
)
near(
    "fragment-spacing",
    "for i in range(0, 10):\n    pass\n",
    "range(0,10)",
    "range(0, 20)",
    "for i in range(0, 20):\n    pass\n",
)
DOC = "# Guide\n\nIt\u2019s \u201cquick\u201d \u2014 read on.\nNext line.\n"
near(
    "typographic-quotes-in-file",
    DOC,
    'It\'s "quick" - read on.\nNext line.\n',
    'It\'s "quick" - read on.\nThe next line.\n',
    DOC.replace("Next line.", "The next line."),
)
near(
    "typographic-quotes-in-old",
    "say('hi')\nsay('bye')\n",
    "say(\u2018bye\u2019)\n",
    "say('goodbye')\n",
    "say('hi')\nsay('goodbye')\n",
)
near(
    "non-breaking-space",
    "Price:\u00a010 EUR\nTax: 2 EUR\n",
    "Price: 10 EUR\n",
    "Price: 12 EUR\n",
    "Price: 12 EUR\nTax: 2 EUR\n",
)
near(
    "leading-blank-lines",
    "import os\nimport sys\n\nmain()\n",
    "\n\nimport sys\n",
    "\n\nimport sys\nimport re\n",
    "import os\nimport sys\nimport re\n\nmain()\n",
)
near(
    "trailing-blank-lines",
    "a()\nb()\nc()\n",
    "b()\n\n\n",
    "b(1)\n\n\n",
    "a()\nb(1)\nc()\n",
)
RS = (
    "fn f(v: &[i32]) -> i32 {\n    let mut s = 0;\n    for x in v {\n        s += x;\n"
    "    }\n    s\n}\n"
)
near(
    "rust-two-space-nested-new",
    RS,
    "  for x in v {\n    s += x;\n  }\n",
    "  for x in v {\n    if *x > 0 {\n      s += x;\n    }\n  }\n",
    RS.replace("        s += x;\n", "        if *x > 0 {\n            s += x;\n        }\n"),
)
C = "int main(void) {\n\tint n = 0;\n\twhile (n < 3) {\n\t\tn++;\n\t}\n\treturn n;\n}\n"
near(
    "c-tabs-model-eight-spaces",
    C,
    "        while (n < 3) {\n                n++;\n        }\n",
    "        while (n < 5) {\n                n++;\n        }\n",
    C.replace("n < 3", "n < 5"),
)
YAML = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: checkout\n"
near(
    "yaml-four-space-model",
    YAML,
    "        runs-on: ubuntu-latest\n        steps:\n",
    "        runs-on: ubuntu-22.04\n        steps:\n",
    YAML.replace("ubuntu-latest", "ubuntu-22.04"),
)
MAKE = "build:\n\tgcc -o app main.c\n\tstrip app\n\ntest: build\n\t./app --test\n"
near(
    "makefile-recipe-spaces",
    MAKE,
    "build:\n    gcc -o app main.c\n    strip app\n",
    "build:\n    gcc -O2 -o app main.c\n    strip app\n",
    MAKE.replace("gcc -o", "gcc -O2 -o"),
)
near(
    "trailing-space-in-old-block",
    "def f():\n    a = 1\n    b = 2\n    return a + b\n",
    "    a = 1 \n    b = 2 \n",
    "    a = 1\n    b = 3\n",
    "def f():\n    a = 1\n    b = 3\n    return a + b\n",
)
WINPY = "def f():\r\n    if x:\r\n        go()\r\n    done()\r\n"
near(
    "crlf-and-indentation",
    WINPY,
    "if x:\n    go()\n",
    "if x:\n    go(1)\n",
    "def f():\r\n    if x:\r\n        go(1)\r\n    done()\r\n",
)
near(
    "delete-block-wrong-indent",
    "def f():\n    debug()\n    trace()\n    work()\n",
    "debug()\ntrace()\n",
    "",
    "def f():\n    work()\n",
)
METH = (
    "class Api:\n    def get(self, key):\n        return self.store[key]\n\n"
    "    def put(self, key, value):\n        self.store[key] = value\n"
)
near(
    "decorator-added-dedented",
    METH,
    "def get(self, key):\n    return self.store[key]\n",
    "@cached\ndef get(self, key):\n    return self.store[key]\n",
    METH.replace("    def get", "    @cached\n    def get"),
)
near(
    "last-line-no-final-newline",
    "first\nsecond\nthird",
    "second\nthird  \n",
    "second\n3rd\n",
    "first\nsecond\n3rd",
)
near(
    "json-escaped-value",
    '{\n  "name": "demo",\n  "version": "1.0.0"\n}\n',
    '\\"version\\": \\"1.0.0\\"',
    '\\"version\\": \\"1.1.0\\"',
    '{\n  "name": "demo",\n  "version": "1.1.0"\n}\n',
)
near(
    "indent-and-trailing-space",
    "if a:\n    if b:\n        c()   \n        d()\n",
    "if b:\n    c()\n    d()\n",
    "if b:\n    c()\n    d(2)\n",
    "if a:\n    if b:\n        c()   \n        d(2)\n",
)
near(
    "docstring-trimmed",
    'def f():\n    """Return one."""\n    return 1\n',
    '"""Return one."""\nreturn 1\n',
    '"""Return two."""\nreturn 2\n',
    'def f():\n    """Return two."""\n    return 2\n',
)
near(
    "shell-double-spaces",
    "if [ -f config ]; then\n  source config\nfi\n",
    "if [  -f config  ]; then\n",
    "if [ -f config.local ]; then\n",
    "if [ -f config.local ]; then\n  source config\nfi\n",
)
HTML = "<ul>\n  <li>One</li>\n  <li>Two</li>\n</ul>\n"
near(
    "html-dedented",
    HTML,
    "<li>Two</li>\n",
    "<li>Two</li>\n<li>Three</li>\n",
    HTML.replace("  <li>Two</li>\n", "  <li>Two</li>\n  <li>Three</li>\n"),
)
LUA = "function f(t)\n\tfor k, v in pairs(t) do\n\t\tprint(k, v)\n\tend\nend\n"
near(
    "lua-tabs-two-spaces",
    LUA,
    "  for k, v in pairs(t) do\n    print(k, v)\n  end\n",
    "  for k, v in pairs(t) do\n    print(k, '=', v)\n  end\n",
    LUA.replace("print(k, v)", "print(k, '=', v)"),
)
near(
    "literal-tab-escape",
    "all:\n\techo hi\n",
    "all:\\n\\techo hi",
    "all:\\n\\techo hello",
    "all:\n\techo hello\n",
)
near(
    "dedent-new-lines-after-block",
    "def g():\n    for x in xs:\n        use(x)\n    end()\n",
    "for x in xs:\n    use(x)\n",
    "for x in xs:\n    use(x)\nlog('done')\n",
    "def g():\n    for x in xs:\n        use(x)\n    log('done')\n    end()\n",
)
near(
    "crlf-file-fragment",
    "a = 1\r\nb = 2\r\n",
    "b = 2\n",
    "b = 2\nc = 3\n",
    "a = 1\r\nb = 2\r\nc = 3\r\n",
)
case(
    "multi-two-near-misses",
    "near",
    GO,
    {
        "edits": [
            {"old": "    x := 1\n", "new": "    x := 2\n"},
            {"old": "        fmt.Println(x)\n", "new": "        fmt.Println(x, x)\n"},
        ]
    },
    GO.replace(":= 1", ":= 2").replace("Println(x)", "Println(x, x)"),
)
case(
    "multi-exact-then-indent",
    "near",
    CLS,
    {
        "edits": [
            {"old": "class Cart:", "new": "class Basket:"},
            {
                "old": "def clear(self):\n    self.items = []\n",
                "new": "def clear(self):\n    pass\n",
            },
        ]
    },
    CLS.replace("Cart", "Basket").replace("self.items = []", "pass"),
)
near(
    "deeper-old-than-file",
    "x = compute()\nif x:\n    show(x)\n",
    "        if x:\n            show(x)\n",
    "        if x:\n            show(x)\n            save(x)\n",
    "x = compute()\nif x:\n    show(x)\n    save(x)\n",
)
CONT = "def f():\n    x = call(a,\n             b)\n    return x\n"
near(
    "continuation-line-kept-aligned",
    CONT,
    "x = call(a,\n         b)\nreturn x\n",
    "x = call(a,\n         b, c)\nreturn x\n",
    CONT.replace("b)", "b, c)"),
)
near(
    "off-by-one-space",
    "    a()\n    b()\n    c()\n",
    "    a()\n   b()\n",
    "    a()\n   b(2)\n",
    "    a()\n    b(2)\n    c()\n",
)
near(
    "read-line-numbers-in-old",
    PY,
    "     2\t    result = 0\n     3\t    for item in items:\n",
    "    result = 1\n    for item in items:\n",
    PY.replace("result = 0", "result = 1"),
)
near(
    "read-line-numbers-in-both",
    PY,
    "     5\t    return result",
    "     5\t    return result or None",
    PY.replace("return result", "return result or None"),
)
near(
    "blank-line-with-spaces-in-file",
    "def a():\n    pass\n    \ndef b():\n    pass\n",
    "    pass\n\ndef b():\n",
    "    pass\n\n\ndef b():\n",
    "def a():\n    pass\n    \n\ndef b():\n    pass\n",  # the file's blank line kept as it was
)
case(
    "replace-all-one-tolerant-place",
    "near",
    CLS,
    {"old": "self.count += 1", "new": "self.count += 2", "replace_all": True},
    CLS.replace("+= 1", "+= 2"),
)
near(
    "methods-with-blank-line-dedented",
    CLS,
    "    self.count += 1\n\ndef clear(self):\n",
    "    self.count += 1\n\ndef reset(self):\n",
    CLS.replace("clear", "reset"),
)

# -- exact: the control ---------------------------------------------------------------------

case(
    "exact-line",
    "exact",
    PY,
    {"old": "    return result\n", "new": "    return -result\n"},
    PY.replace("return result", "return -result"),
)
case(
    "exact-fragment",
    "exact",
    JS,
    {"old": "return 0", "new": "return -1"},
    JS.replace("return 0", "return -1"),
)
case(
    "exact-block-tabs",
    "exact",
    GO,
    {"old": "\tx := 1\n", "new": "\tx := 3\n"},
    GO.replace(":= 1", ":= 3"),
)
case(
    "exact-crlf",
    "exact",
    WIN,
    {"old": "line two\r\n", "new": "line 2\r\n"},
    WIN.replace("line two", "line 2"),
)
case(
    "exact-replace-all",
    "exact",
    "a = 1\nb = a\nc = a\n",
    {"old": "a", "new": "z", "replace_all": True},
    "z = 1\nb = z\nc = z\n",
)
case(
    "exact-unicode",
    "exact",
    DOC,
    {"old": "\u201cquick\u201d", "new": "\u201cfast\u201d"},
    DOC.replace("quick", "fast"),
)
case(
    "exact-delete",
    "exact",
    MAKE,
    {"old": "\tstrip app\n", "new": ""},
    MAKE.replace("\tstrip app\n", ""),
)
case(
    "exact-escaped-in-file",
    "exact",
    'x = "a\\"b"\n',
    {"old": 'a\\"b', "new": 'a\\"c'},
    'x = "a\\"c"\n',
)

# -- no plausible target: refused -----------------------------------------------------------

case("none-other-function", "none", PY, {"old": "def average(items):\n", "new": "x"}, None)
case(
    "none-other-name",
    "none",
    CLS,
    {"old": "def remove(self, item):\n    self.items.remove(item)\n", "new": ""},
    None,
)
case(
    "none-middle-rewritten",
    "none",
    DRIFT,
    {
        "old": "def load(path):\n    response = fetch(path)\n    cache.store(response)\n"
        "    return parse(data)\n",
        "new": "x\n",
    },
    None,
)
case(
    "none-anchor-longer-block",
    "none",
    DRIFT,
    {"old": "def load(path):\n    return parse(data)\n", "new": "x\n"},
    None,
)
case(
    "none-value-differs",
    "none",
    "timeout = 30\nretries = 3\n",
    {"old": "timeout = 60\n", "new": "timeout = 90\n"},
    None,
)
case("none-word-inside-word", "none", "maximum = 10\n", {"old": "max = 10", "new": "max = 5"}, None)
case("none-escaped-differs", "none", QUOTED, {"old": 'msg = \\"bye\\"', "new": 'msg = "x"'}, None)
case("none-empty-file", "none", "", {"old": "anything", "new": "x"}, None)
case("none-whitespace-only-old", "none", "a\n\n\nb\n", {"old": "  \n  ", "new": "x"}, None)
case(
    "none-typo-in-identifier",
    "none",
    CLS,
    {"old": "        self.itmes.append(item)\n", "new": "x\n"},
    None,
)
case(
    "none-lines-in-other-order",
    "none",
    CLS,
    {"old": "    self.count += 1\n    self.items.append(item)\n", "new": "x\n"},
    None,
)
case(
    "none-anchors-around-a-longer-block",
    "none",
    DRIFT2,
    {"old": "for (let i = 0; i < n; i++) {\n  total += values[i];\n  count++;\n}\n", "new": "x\n"},
    None,
)
case(
    "none-numbered-other-text",
    "none",
    PY,
    {"old": "     3\t    for row in rows:", "new": "x"},
    None,
)

# -- two plausible targets: refused ---------------------------------------------------------

TWO = (
    "class A:\n    def run(self):\n        self.step()\n        return True\n\n"
    "class B:\n    def run(self):\n        self.step()\n        return True\n"
)
case(
    "two-dedented-methods",
    "two",
    TWO,
    {"old": "def run(self):\n    self.step()\n", "new": "def run(self):\n    pass\n"},
    None,
)
case(
    "two-indent-levels",
    "two",
    "if a:\n    go()\nif b:\n        go()\n",
    {"old": "  go()\n", "new": "  stop()\n"},
    None,
)
case(
    "two-trailing-space",
    "two",
    "x = 1 \ny = 2\nx = 1  \n",
    {"old": "x = 1\n", "new": "x = 3\n"},
    None,
)
case("two-fragments", "two", "f(a,b)\ng(f(a, b))\n", {"old": "f( a, b )", "new": "f(b, a)"}, None)
case(
    "two-block-anchors",
    "two",
    "try:\n    a()\n    b()\nexcept E:\n    pass\ntry:\n    a()\n    c()\nexcept E:\n    pass\n",
    {"old": "try:\n    a()\n    d()\nexcept E:\n", "new": "x\n"},
    None,
)
case("two-escaped", "two", 'say("hi")\nsay("hi")\n', {"old": 'say(\\"hi\\")', "new": "x"}, None)
case("two-exact", "two", "pass\npass\n", {"old": "pass", "new": "return"}, None)
case(
    "two-typographic",
    "two",
    "It\u2019s done.\nok\nIt\u2019s done.\n",
    {"old": "It's done.\n", "new": "Done.\n"},
    None,
)
case("two-numbered", "two", "x = 1\nx = 1\n", {"old": "     1\tx = 1", "new": "x = 2"}, None)
case("two-crlf", "two", "a\r\nb\r\na\r\nb\r\n", {"old": "a\nb\n", "new": "c\n"}, None)


# -- the run --------------------------------------------------------------------------------


async def run_cases(folder: Path, cases: list[Case]) -> tuple[dict[str, Any], list[str]]:
    import tui_agent

    folder.mkdir(parents=True, exist_ok=True)
    session = tui_agent.create_session(folder, yes=True)
    figures = {"cases": len(cases), "one_target": 0, "applied": 0, "refused": 0, "wrong": 0}
    applied_one = 0
    misses: list[str] = []
    for number, item in enumerate(cases):
        path = folder / f"case_{number:03d}.txt"
        path.write_bytes(item.before.encode("utf-8"))
        result = (await session.toolbox.run("edit", {"path": path.name, **item.call})).to_dict()
        after = path.read_bytes().decode("utf-8")
        one = item.kind in ("near", "exact")
        figures["one_target"] += one
        if result.get("ok"):
            figures["applied"] += 1
            applied_one += one
            if after != item.after:
                figures["wrong"] += 1
                misses.append(f"WRONG {item.name}: {after!r} (expected {item.after!r})")
        else:
            figures["refused"] += 1
            if after != item.before:
                figures["wrong"] += 1
                misses.append(f"WRONG {item.name}: refused but the file changed")
            if one:
                misses.append(f"refused {item.name}: {result.get('error')}")
    figures["applied_one_target"] = applied_one
    await session.close()
    return figures, misses


def bench_edit(sandbox: Sandbox) -> dict[str, Any]:
    """Every case of the corpus through ``session.toolbox.run("edit", …)`` of a real session."""
    began = time.perf_counter()
    figures, misses = asyncio.run(run_cases(sandbox.root / "edit-corpus", CASES))
    for miss in misses:
        log(f"edit: {miss}")
    log(
        f"edit: {figures['applied_one_target']} of {figures['one_target']} one-target cases "
        f"applied; {len(CASES)} cases in {time.perf_counter() - began:.2f} s"
    )
    return figures


if __name__ == "__main__":
    box = Sandbox()
    box.enter(box.home("edit"))
    try:
        print(json.dumps(bench_edit(box), indent=2))
    finally:
        box.close()
    sys.exit(0)
