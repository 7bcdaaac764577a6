"""Issue 19: the bundled ``edit`` forgives a model's near misses (core/engines/edits.py), applies
several edits at once all or nothing, and ``read`` caps its bytes and lists folders.

Through the real toolbox of a real session (``session.toolbox.run``), one real turn
against FakeOpenAI, and the approval dialog under Pilot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import write
from jsonschema.validators import validator_for

from tui_agent import create_session
from tui_agent.testing import Call, FakeOpenAI, Reply, run_app, send, turn_over, wait_for

GO = b"func main() {\n\tx := 1\n\tif x > 0 {\n\t\tfmt.Println(x)\n\t}\n}\n"
PY = (
    b"class Cart:\n    def add(self, item):\n        self.items.append(item)\n        self.n += 1\n"
)


async def run(session: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return (await session.toolbox.run(name, args)).to_dict()


async def edit(folder: Path, before: bytes, call: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """``before`` in f.txt, the edit tool called on it: the result and the file after."""
    path = folder / "f.txt"
    path.write_bytes(before)
    result = await run(create_session(folder), "edit", {"path": "f.txt", **call})
    return result, path.read_bytes()


# -- each matcher: applied at its one place -------------------------------------------------

APPLIED = [
    # (matcher, file before, call, file after)
    ("exact", b"a = 1\nb = 2\n", {"old": "b = 2", "new": "b = 3"}, b"a = 1\nb = 3\n"),
    (
        "line-endings",
        b"one\r\ntwo\r\nthree\r\n",
        {"old": "one\ntwo\n", "new": "1\n2\n"},
        b"1\r\n2\r\nthree\r\n",
    ),
    ("line-endings", b"one\ntwo\n", {"old": "one\r\ntwo", "new": "1\r\n2"}, b"1\n2\n"),
    (
        "trailing-whitespace",
        b"name = 'a'   \nsize = 3\n",
        {"old": "name = 'a'\nsize = 3\n", "new": "name = 'a'\nsize = 4\n"},
        b"name = 'a'   \nsize = 4\n",
    ),
    (
        "indentation",  # spaces for the file's tabs; new re-indented in tabs
        GO,
        {
            "old": "    if x > 0 {\n        fmt.Println(x)\n    }\n",
            "new": "    if x > 0 {\n        log(x)\n        fmt.Println(x)\n    }\n",
        },
        GO.replace(b"\t\tfmt", b"\t\tlog(x)\n\t\tfmt"),
    ),
    (
        "indentation",  # one level too shallow, a line added
        PY,
        {
            "old": "    self.items.append(item)\n    self.n += 1\n",
            "new": "    self.items.append(item)\n    if item:\n        self.n += 1\n",
        },
        PY.replace(b"        self.n", b"        if item:\n            self.n"),
    ),
    (
        "indentation",  # old's first line without its indentation: new's lines follow the file
        b"<ul>\n  <li>One</li>\n</ul>\n",
        {"old": "<li>One</li>\n", "new": "<li>One</li>\n<li>Two</li>\n"},
        b"<ul>\n  <li>One</li>\n  <li>Two</li>\n</ul>\n",
    ),
    (
        "trimmed-lines",  # old's own indentation is off by a space on one line
        b"    a()\n    b()\n    c()\n",
        {"old": "    a()\n   b()\n", "new": "    a()\n   b(2)\n"},
        b"    a()\n    b(2)\n    c()\n",
    ),
    (
        "whitespace",
        b"result = compute(a, b)\nprint(result)\n",
        {"old": "result = compute( a,b )\n", "new": "result = compute(a, b, c)\n"},
        b"result = compute(a, b, c)\nprint(result)\n",
    ),
    (
        "whitespace",  # part of a line
        b"for i in range(0, 10):\n    pass\n",
        {"old": "range(0,10)", "new": "range(0, 20)"},
        b"for i in range(0, 20):\n    pass\n",
    ),
    (
        "unicode",
        "It\u2019s \u201cquick\u201d \u2014 yes.\nNext.\n".encode(),
        {"old": 'It\'s "quick" - yes.\nNext.\n', "new": 'It\'s "quick" - yes.\nThen.\n'},
        "It\u2019s \u201cquick\u201d \u2014 yes.\nThen.\n".encode(),
    ),
    (
        "escapes",
        b'msg = "hello"\nprint(msg)\n',
        {"old": 'msg = \\"hello\\"', "new": 'msg = \\"bye\\"'},
        b'msg = "bye"\nprint(msg)\n',
    ),
    (
        "escapes",  # newlines sent as \n, twice escaped
        b"def f():\n    a = 1\n    return a\n",
        {"old": "    a = 1\\n    return a", "new": "    a = 2\\n    return a"},
        b"def f():\n    a = 2\n    return a\n",
    ),
    (
        "line-numbers",  # copied from read's output
        PY,
        {"old": "     4\t        self.n += 1\n", "new": "        self.n += 2\n"},
        PY.replace(b"+= 1", b"+= 2"),
    ),
    (
        "block-anchors",  # the middle drifted; the line new keeps keeps the file's text
        b"def load(path):\n    with open(path) as handle:\n        data = handle.read()\n"
        b"    return parse(data)\n",
        {
            "old": "def load(path):\n    with open(path) as fh:\n        data = fh.read()\n"
            "    return parse(data)\n",
            "new": "def load(path):\n    with open(path) as fh:\n        data = fh.read()\n"
            "    return parse(data, strict=True)\n",
        },
        b"def load(path):\n    with open(path) as handle:\n        data = handle.read()\n"
        b"    return parse(data, strict=True)\n",
    ),
]


@pytest.mark.parametrize(("matcher", "before", "call", "after"), APPLIED)
async def test_each_matcher_applies_at_its_one_place(
    tmp_path: Path, matcher: str, before: bytes, call: dict[str, Any], after: bytes
) -> None:
    result, now = await edit(tmp_path, before, call)
    assert result["ok"], result
    assert now == after
    if matcher == "exact":
        assert "matched" not in result and "note" not in result
    else:
        assert result["matched"] == matcher
        assert result["note"].startswith("old ")
    assert result["replacements"] == 1
    assert result["diff"].startswith("--- a/f.txt\n+++ b/f.txt\n")


# -- and refused where it could be wrong ----------------------------------------------------

REFUSED = [
    # (file before, call, words in the error)
    (b"x = 1\nx = 1\n", {"old": "x = 1", "new": "y"}, ["2 times", "lines 1, 2"]),
    (b"a\r\nb\r\na\r\nb\r\n", {"old": "a\nb\n", "new": "c\n"}, ["2 times"]),
    (b"x = 1 \ny = 2\nx = 1  \n", {"old": "x = 1\n", "new": "x = 3\n"}, ["lines 1, 3"]),
    (
        b"class A:\n    def run(self):\n        go()\nclass B:\n    def run(self):\n        go()\n",
        {"old": "def run(self):\n    go()\n", "new": "x\n"},
        ["2 places", "indentation", "lines 2-3, 5-6"],
    ),
    (b"f(a,b)\ng(f(a, b))\n", {"old": "f( a, b )", "new": "f(b, a)"}, ["2 places", "lines 1, 2"]),
    (
        "It\u2019s done.\nok\nIt\u2019s done.\n".encode(),
        {"old": "It's done.\n", "new": "Done.\n"},
        ["unicode", "lines 1, 3"],
    ),
    (b'say("hi")\nsay("hi")\n', {"old": 'say(\\"hi\\")', "new": "x"}, ["2 times", "escapes"]),
    (b"x = 1\nx = 1\n", {"old": "     1\tx = 1", "new": "x = 2"}, ["2 times", "line-numbers"]),
    (
        b"try:\n    a()\n    b()\nexcept E:\n    pass\ntry:\n    a()\n    c()\nexcept E:\n",
        {"old": "try:\n    a()\n    d()\nexcept E:\n", "new": "x\n"},
        ["block-anchors", "lines 1-4, 6-9"],
    ),
    # absent: no plausible target
    (
        PY,
        {"old": "        self.itmes.append(item)\n", "new": "x\n"},
        ["not found", "the closest is line 3 ("],
    ),
    (PY, {"old": "    self.n += 1\n    self.items.append(item)\n", "new": "x\n"}, ["not found"]),
    (
        b"def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n",
        {"old": "def f():\n    a = 1\n    b = 2\n    return a\n", "new": "x\n"},
        ["not found"],  # the anchors hold a longer block
    ),
    (
        b"def f():\n    a = fetch()\n    return a\n",
        {"old": "def f():\n    cache.store(response, forever=True)\n    return a\n", "new": "x\n"},
        ["not found"],  # the anchors hold, the middle is another line
    ),
    (b"maximum = 10\n", {"old": "max = 10", "new": "max = 5"}, ["not found"]),
    (b"a\n\n\nb\n", {"old": "  \n  ", "new": "x"}, ["not found"]),
]


@pytest.mark.parametrize(("before", "call", "words"), REFUSED)
async def test_ambiguous_or_absent_is_refused_and_the_file_left_alone(
    tmp_path: Path, before: bytes, call: dict[str, Any], words: list[str]
) -> None:
    result, now = await edit(tmp_path, before, call)
    assert not result["ok"], result
    assert now == before
    for word in words:
        assert word in result["error"]


async def test_not_found_shows_the_closest_lines_to_retry_with(tmp_path: Path) -> None:
    before = b"import os\n\ndef total(items):\n    result = 0\n    return result\n"
    result, _ = await edit(tmp_path, before, {"old": "def totl(items):\n    res = 0\n", "new": ""})
    assert not result["ok"]
    error = result["error"]
    assert error.startswith("old text not found in f.txt; the closest is lines 3-4 (")
    assert "     3\tdef total(items):\n     4\t    result = 0\n" in error
    nothing, _ = await edit(tmp_path, before, {"old": "zzz qqq\nvvv", "new": ""})
    assert "nothing in it is close" in nothing["error"]


# -- line endings, final newline ------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("final", [True, False])
async def test_line_endings_and_final_newline_stay_as_they_were(
    tmp_path: Path, eol: bytes, final: bool
) -> None:
    lines = [b"def f():", b"    if x:", b"        go()", b"    done()"]
    before = eol.join(lines) + (eol if final else b"")
    call = {"old": "if x:\n    go()\ndone()\n", "new": "if x:\n    go(1)\n    go(2)\ndone()\n"}
    result, now = await edit(tmp_path, before, call)
    assert result["ok"] and result["matched"] == "indentation", result
    expected = [b"def f():", b"    if x:", b"        go(1)", b"        go(2)", b"    done()"]
    assert now == eol.join(expected) + (eol if final else b"")


async def test_deleting_lines_found_tolerantly_takes_their_line_endings(tmp_path: Path) -> None:
    before = b"def f():\r\n    debug()\r\n    trace()\r\n    work()\r\n"
    result, now = await edit(tmp_path, before, {"old": "debug()\ntrace()\n", "new": ""})
    assert result["ok"], result
    assert now == b"def f():\r\n    work()\r\n"


# -- replace_all ----------------------------------------------------------------------------


async def test_replace_all_is_exact_but_one_tolerant_place_is_still_edited(
    tmp_path: Path,
) -> None:
    result, now = await edit(
        tmp_path, b"a = 1\nb = a\n", {"old": "a", "new": "z", "replace_all": True}
    )
    assert result["ok"] and result["replacements"] == 2 and now == b"z = 1\nb = z\n"
    result, now = await edit(
        tmp_path, PY, {"old": "self.n  +=  1", "new": "self.n += 2", "replace_all": True}
    )
    assert result["ok"] and result["matched"] == "whitespace", result
    assert "only this one place" in result["note"]
    assert now == PY.replace(b"+= 1", b"+= 2")
    before = b"x = 1 \nx = 1  \n"
    result, now = await edit(
        tmp_path, before, {"old": "x = 1\n", "new": "y\n", "replace_all": True}
    )
    assert not result["ok"] and "2 places" in result["error"] and now == before


# -- several edits in one call --------------------------------------------------------------


async def test_edits_apply_in_order_and_one_diff_covers_them(tmp_path: Path) -> None:
    call = {
        "edits": [
            {"old": "x := 1", "new": "x := 2"},
            {"old": "    x := 2\n    if x > 0 {", "new": "    x := 2\n    if x > 1 {"},  # after 1
            {"old": "fmt.Println(x)", "new": "fmt.Println(x, x)", "replace_all": True},
        ]
    }
    result, now = await edit(tmp_path, GO, call)
    assert result["ok"], result
    assert now == GO.replace(b":= 1", b":= 2").replace(b"> 0", b"> 1").replace(b"(x)", b"(x, x)")
    assert result["edits"] == 3 and result["replacements"] == 3
    assert result["matched"] == ["exact", "indentation", "exact"]
    assert result["note"].startswith("edit 2: old ")
    diff = result["diff"]
    body = diff.splitlines()[2:]
    assert sum(r[0] == "-" for r in body) == 3 and sum(r[0] == "+" for r in body) == 3
    assert "+\tx := 2" in diff and "+\tif x > 1 {" in diff and "+\t\tfmt.Println(x, x)" in diff


@pytest.mark.parametrize(
    ("second", "words"),
    [
        ({"old": "not in the file", "new": "x"}, ["edit 2 of 3 failed", "not found"]),
        ({"old": "\t", "new": " "}, ["edit 2 of 3 failed", "times"]),
        ({"old": "", "new": "x"}, ["edit 2 of 3 failed", "old is empty"]),
    ],
)
async def test_edits_are_all_or_nothing(
    tmp_path: Path, second: dict[str, Any], words: list[str]
) -> None:
    call = {"edits": [{"old": "x := 1", "new": "x := 2"}, second, {"old": "main", "new": "m"}]}
    result, now = await edit(tmp_path, GO, call)
    assert not result["ok"], result
    assert now == GO
    for word in [*words, "no edit was written"]:
        assert word in result["error"]


@pytest.mark.parametrize(
    ("call", "words"),
    [
        ({"old": "a", "new": "b", "edits": [{"old": "a", "new": "b"}]}, ["not both"]),
        ({"replace_all": True, "edits": [{"old": "a", "new": "b"}]}, ["not both"]),
        ({"old": "a"}, ["new missing"]),
        ({}, ["old and new missing"]),
        ({"edits": []}, ["edits"]),  # the schema's minItems
        ({"edits": [{"old": "a"}]}, ["new"]),
    ],
)
async def test_edit_says_what_is_missing(
    tmp_path: Path, call: dict[str, Any], words: list[str]
) -> None:
    result, now = await edit(tmp_path, b"a\n", call)
    assert not result["ok"], result
    assert now == b"a\n"
    for word in words:
        assert word in result["error"]


async def test_edit_schema_is_valid_and_older_calls_still_work(tmp_path: Path) -> None:
    session = create_session(tmp_path)
    [definition] = [d for d in session.toolbox.definitions() if d["function"]["name"] == "edit"]
    schema = definition["function"]["parameters"]
    validator_for(schema).check_schema(schema)
    assert schema["required"] == ["path"]
    assert schema["properties"]["edits"]["items"]["required"] == ["old", "new"]
    json.dumps(definition)  # what goes over the wire
    write(tmp_path / "f.txt", "a = 1\n")
    result = await run(session, "edit", {"path": "f.txt", "old": "1", "new": "2"})
    assert result["ok"] and "edits" not in result and "matched" not in result
    assert (tmp_path / "f.txt").read_text() == "a = 2\n"


# -- read: caps and folders -----------------------------------------------------------------


async def test_read_stops_at_50_kb_and_says_where_to_read_on(tmp_path: Path) -> None:
    lines = [f"{n:05d} " + "x" * 94 for n in range(1, 2001)]  # 2,000 lines of 100 bytes
    text = "\n".join(lines) + "\n"
    write(tmp_path / "big.txt", text)
    session = create_session(tmp_path)
    first = await run(session, "read", {"path": "big.txt"})
    assert first["ok"], first
    assert len(first["content"].encode()) <= 50 * 1024
    shown = first["content"].splitlines()
    assert 400 < len(shown) < 2000
    nxt = first["next_offset"]
    assert nxt == len(shown) + 1
    left = sum(len(line) + 1 for line in lines[nxt - 1 :])
    assert first["note"] == (
        f"showing lines 1-{nxt - 1} of 2000 (the 50 KB cap of one read); {2001 - nxt} more "
        f"lines ({left} bytes) not shown; read on with offset={nxt}, or ask for more with limit"
    )
    # reading on from next_offset until it is gone gives the whole file, once
    got, offset, result = list(shown), nxt, first
    while "next_offset" in result:
        result = await run(session, "read", {"path": "big.txt", "offset": offset})
        got += result["content"].splitlines()
        offset = result.get("next_offset", 0)
    assert [row.split("\t", 1)[1] for row in got] == lines
    assert [int(row.split("\t", 1)[0]) for row in got] == list(range(1, 2001))


async def test_read_limit_asks_for_more_up_to_256_kb(tmp_path: Path) -> None:
    write(tmp_path / "big.txt", "".join(f"{n:05d} {'y' * 194}\n" for n in range(1, 5001)))
    session = create_session(tmp_path)
    more = await run(session, "read", {"path": "big.txt", "limit": 600})
    assert more["ok"] and len(more["content"].splitlines()) == 600  # ~124 KB: asked for
    assert more["note"] == "showing lines 1-600 of 5000; read on with offset=601"
    assert more["next_offset"] == 601
    most = await run(session, "read", {"path": "big.txt", "limit": 5000, "offset": 11})
    size = len(most["content"].encode())
    assert 250 * 1024 < size <= 256 * 1024
    assert "(the 256 KB cap of one read)" in most["note"] and "with limit" not in most["note"]
    assert most["content"].splitlines()[0].split("\t")[0].strip() == "11"


async def test_read_of_very_long_lines_counts_the_cut_lines(tmp_path: Path) -> None:
    write(tmp_path / "wide.txt", ("z" * 100_000 + "\n") * 40)  # 4 MB
    result = await run(create_session(tmp_path), "read", {"path": "wide.txt"})
    assert result["ok"]
    rows = result["content"].splitlines()
    # each row: 7 + 2,000 + 3 (…) + 23 bytes, and its newline: 25 rows fit in 50 KB, 26 not
    assert len(result["content"].encode()) <= 50 * 1024 and len(rows) == 25
    assert all(row.endswith("z… [98000 characters cut]") for row in rows)
    assert result["next_offset"] == 26


async def test_read_of_a_folder_lists_it_one_level(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "guide.md", "g\n")
    write(tmp_path / "docs" / "api" / "index.md", "i\n")
    write(tmp_path / "docs" / "api" / "deep" / "more.md", "m\n")
    write(tmp_path / "docs" / "node_modules" / "x.js", "x\n")
    result = await run(create_session(tmp_path), "read", {"path": "docs"})
    assert result["ok"], result
    assert result["folder"] is True and result["path"] == "docs"
    assert result["entries"] == ["api/", "guide.md"]
    assert result["note"].startswith("docs is a folder: its entries, one level")
    assert "content" not in result


# -- approval dialog, one real turn ---------------------------------------------------------


@pytest.mark.real_permissions
async def test_approval_preview_shows_each_edit(project: Path) -> None:
    from test_app import preview_text

    from tui_agent.ui.dialogs.approval import ApprovalScreen

    write(project / "f.txt", "alpha\nbeta\n")
    call = {
        "path": "f.txt",
        "edits": [{"old": "alpha", "new": "ALPHA"}, {"old": "beta", "new": "BETA"}],
    }
    script = [Reply(calls=[Call("edit", call)]), Reply("done")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        async with run_app(session) as pilot:
            await send(pilot, "change both")
            await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen))
            screen = pilot.app.screen
            assert isinstance(screen, ApprovalScreen)
            await wait_for(pilot, lambda: screen.query("#approval-preview Static"))  # composed
            shown = preview_text(screen)
            assert "@@ edit 1 of 2 @@\n-alpha\n+ALPHA\n@@ edit 2 of 2 @@\n-beta\n+BETA" in shown
            await pilot.pause(0.35)  # the key guard
            await pilot.press("y")
            await turn_over(pilot)
        session.conversation.journal.close()
    assert (project / "f.txt").read_text() == "ALPHA\nBETA\n"


async def test_a_models_near_miss_edit_applies_in_a_real_turn(project: Path) -> None:
    write(project / "cart.py", PY.decode())
    near_miss = {  # a local model's copy: two-space indentation, a level too shallow
        "path": "cart.py",
        "old": "  def add(self, item):\n    self.items.append(item)\n",
        "new": "  def add(self, item):\n    self.items.append(item)\n    self.changed = True\n",
    }
    script = [Reply(calls=[Call("edit", near_miss)]), Reply("Added the flag.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        reply = await session.turn("mark the cart changed on add")
        session.conversation.journal.close()
    assert reply == "Added the flag."
    assert (project / "cart.py").read_bytes() == PY.replace(
        b"append(item)\n", b"append(item)\n        self.changed = True\n"
    )
    sent = json.loads(server.requests[1]["messages"][-1]["content"])
    assert sent["ok"] and sent["matched"] == "indentation"
    assert "matched lines 2-3 ignoring indentation" in sent["note"]


# -- the diff is a valid unified diff in every newline case (issue 26) -----------------------

NEWLINE_CASES = [
    # (file before, old, new): each file's diff is applied by the real `patch` program
    (b"all is fine", "fine", "great"),  # one line, no final newline (was: -fine+great on a line)
    (b"one\ntwo\nfine", "fine", "great"),  # the last line changed, no final newline
    (b"one\ntwo\nthree\nfour\nlast", "two", "2"),  # the unchanged last line is context
    (b"one\ntwo", "two", "two\n"),  # a final newline added
    (b"one\ntwo\n", "two\n", "two"),  # the final newline taken away
    (b"a\r\nb\r\nc", "b", "B"),  # CRLF, no final newline
    (b"a\rb\nc\n", "b", "B"),  # a lone CR inside a line: patch cuts lines at LF only
    (b"x\x0cy\nz\xe2\x80\xa8w\n", "z", "Z"),  # form feed and U+2028 stay inside their lines
    (b"keep\n", "keep\n", ""),  # the file emptied
]


@pytest.mark.parametrize(("before", "old", "new"), NEWLINE_CASES)
async def test_the_edit_diff_applies_with_patch_in_every_newline_case(
    tmp_path: Path, before: bytes, old: str, new: str
) -> None:
    import shutil
    import subprocess

    assert shutil.which("patch"), "the patch program is needed (apt-get install patch)"
    result, after = await edit(tmp_path, before, {"old": old, "new": new})
    assert result["ok"], result
    diff = result["diff"]
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n@@ ")
    assert diff.endswith("\n")
    if any(side and not side.endswith(b"\n") for side in (before, after)):
        assert "\n\\ No newline at end of file\n" in diff
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "f.txt").write_bytes(before)
    applied = subprocess.run(
        ["patch", "-p1", "--batch", "--no-backup-if-mismatch"],
        input=diff.encode("utf-8"),
        cwd=copy,
        capture_output=True,
        check=False,
    )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (copy / "f.txt").read_bytes() == after
    assert not [p.name for p in copy.iterdir() if p.name != "f.txt"]  # no .rej, no .orig


async def test_the_edit_diff_marks_both_sides_without_a_final_newline(tmp_path: Path) -> None:
    result, after = await edit(tmp_path, b"fine", {"old": "fine", "new": "great"})
    assert after == b"great"
    assert result["diff"] == (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n"
        "-fine\n\\ No newline at end of file\n"
        "+great\n\\ No newline at end of file\n"
    )
