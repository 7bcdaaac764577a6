"""Issue 35: sessions as a person finds them again (core/conversation/titles.py): a title
(the first prompt's start, or the name /rename gave), turns, the model, the journal's
size, the last exchange; this folder's or every folder's. Real sessions against the
testing kit's fake server, real journals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tui_agent import create_session
from tui_agent.core.conversation import titles
from tui_agent.core.conversation.journal import sessions_dir
from tui_agent.testing import Call, FakeOpenAI, Reply


@pytest.mark.parametrize(
    ("prompt", "title"),
    [
        ("fix the login bug", "fix the login bug"),
        ("\n\n  fix it  \nthen the tests", "fix it"),
        (
            "explain the retry logic of the HTTP client and suggest a simpler design for it",
            "explain the retry logic of the HTTP client and suggest a…",
        ),
        ("x" * 100, "x" * 60 + "…"),  # no space to cut at: cut at 60
        ("", ""),
    ],
)
def test_a_title_is_the_first_line_of_the_prompt_cut_at_a_word(prompt: str, title: str) -> None:
    assert titles.default_title(prompt) == title


@pytest.mark.parametrize(
    ("given", "error"),
    [("", "needs some text"), ("   \n ", "needs some text"), ("x" * 121, "at most 120")],
)
def test_a_title_given_must_be_one_line_of_some_text(given: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        titles.clean_title(given)
    assert titles.clean_title("  my \n  work ") == "my work"


async def test_a_session_lists_its_title_turns_model_size_and_last_exchange(
    project: Path,
) -> None:
    script = [
        Reply("I will look.", calls=[Call("list", {})]),
        Reply("There are no files yet."),
        Reply("Then write one: **main.py**."),
    ]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("what is in this project?\nlook closely")
        await session.turn("what should I do next?")
        await session.close()
    [found] = session.conversation.sessions()
    assert found.id == session.id
    assert found.title == "what is in this project?"
    assert not found.named
    assert found.turns == 2
    assert found.messages == len(session.conversation.messages) == 6
    assert found.model == "fake-model"
    assert found.size == session.conversation.journal.path.stat().st_size > 0
    assert found.directory == str(project)
    assert found.last_prompt == "what should I do next?"
    assert found.last_reply == "Then write one: **main.py**."
    assert found.first_prompt == "what is in this project?\nlook closely"
    assert found.as_data()["model"] == "fake-model"
    json.dumps(found.as_data())  # tui-agent sessions --json prints it


async def test_the_model_listed_is_the_last_one_the_session_talked_to(project: Path) -> None:
    async with FakeOpenAI([Reply("one"), Reply("two")]) as server:
        session = create_session(project, base_url=server.base_url, model="first-model")
        await session.turn("hello")
        session.extensions.set_model(model="second-model")
        await session.turn("again")
        await session.close()
    records = [
        json.loads(line)
        for line in session.conversation.journal.path.read_text().split("\n")
        if line
    ]
    assert [r["model"] for r in records if r["type"] == "model"] == ["first-model", "second-model"]
    assert session.conversation.sessions()[0].model == "second-model"


async def test_rename_names_the_session_in_its_journal_and_it_survives_a_resume(
    project: Path,
) -> None:
    session = create_session(project)
    await session.turn("a long prompt about the parser")
    assert session.conversation.title == "a long prompt about the parser"
    assert session.conversation.rename("  parser   work ") == "parser work"
    assert session.conversation.title == "parser work"
    [found] = session.conversation.sessions()
    assert (found.title, found.named) == ("parser work", True)
    with pytest.raises(ValueError, match="needs some text"):
        session.conversation.rename(" ")
    assert session.conversation.title == "parser work"  # nothing written for a bad title

    later = create_session(project)
    assert later.conversation.resume(session.id)
    assert later.conversation.title == "parser work"
    assert later.conversation.rename("second name") == "second name"
    assert session.conversation.sessions()[0].title == "second name"  # the last one wins
    assert later.conversation.messages == session.conversation.messages  # records are not messages


async def test_a_fresh_session_can_be_named_before_its_first_prompt(project: Path) -> None:
    session = create_session(project)
    assert session.conversation.title == ""
    session.conversation.rename("later work")
    [found] = session.conversation.sessions()
    assert (found.title, found.turns, found.messages) == ("later work", 0, 0)


async def test_this_folders_sessions_or_every_folders_newest_first(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    made = []
    for folder, prompt in [
        (project, "first here"),
        (other, "over there"),
        (project, "second here"),
    ]:
        session = create_session(folder)
        await session.turn(prompt)
        made.append(session)
    for age, session in enumerate(reversed(made)):  # mtimes a minute apart, the last newest
        path = session.conversation.journal.path
        os.utime(path, (path.stat().st_mtime - 60 * age,) * 2)
    here = made[0].conversation.sessions()
    assert [s.title for s in here] == ["second here", "first here"]
    everywhere = made[0].conversation.sessions(everywhere=True)
    assert [s.title for s in everywhere] == ["second here", "over there", "first here"]
    assert everywhere[1].directory == str(other)


async def test_damaged_and_foreign_files_are_left_out_or_read_as_far_as_they_go(
    project: Path,
) -> None:
    session = create_session(project)
    await session.turn("still listed")
    folder = sessions_dir()
    (folder / "notes.jsonl").write_text('{"not": "a journal"}\n')
    (folder / "empty.jsonl").write_text("")
    (folder / "binary.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with session.conversation.journal.path.open("a") as handle:
        handle.write('{"type": "message", "message": {"role": "user", "con')  # torn by a crash
    [found] = session.conversation.sessions()
    assert (found.title, found.turns) == ("still listed", 1)


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("", True),
        ("PARSER", True),
        ("parser fake", True),  # every word, anywhere: the title and the model
        ("parser missing", False),
        ("deep in the second prompt", True),
    ],
)
async def test_a_filter_looks_in_the_title_prompts_id_model_and_folder(
    project: Path, query: str, kept: bool
) -> None:
    async with FakeOpenAI([Reply("ok"), Reply("ok")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("the parser breaks")
        await session.turn("it fails deep in the second prompt")
        await session.close()
    [found] = session.conversation.sessions()
    assert found.matches(query) is kept
    assert found.matches(session.id[-6:]) and found.matches(project.name)


def test_a_summary_is_read_again_only_when_the_journal_changed(project: Path) -> None:
    session = create_session(project)
    session.conversation.rename("one")
    path = session.conversation.journal.path
    first = titles.summarize(path)
    assert titles.summarize(path) is first  # kept: the same size and time
    session.conversation.rename("two")
    again = titles.summarize(path)
    assert again is not first and again is not None and again.title == "two"


async def test_control_characters_never_reach_a_title_or_a_preview(project: Path) -> None:
    async with FakeOpenAI([Reply("\x1b]52;c;cGF3bmVk\x07clipboard\x1b[2J")]) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("\x1b[31mred\x1b[0m prompt\x07")
        await session.close()
    session.conversation.rename("a \x1b[2Jtitle\x9b")
    [found] = session.conversation.sessions()
    assert found.title == "a [2Jtitle"
    assert found.first_prompt == "[31mred[0m prompt"
    assert found.last_reply == "]52;c;cGF3bmVkclipboard[2J"
    assert titles.default_title("\x1b[31mred") == "[31mred"


def test_a_fifo_among_the_journals_is_left_alone(project: Path) -> None:
    session = create_session(project)
    session.conversation.rename("listed")
    os.mkfifo(sessions_dir() / "stuck.jsonl")  # reading it would wait for ever
    assert [s.title for s in session.conversation.sessions()] == ["listed"]


@pytest.fixture
def model_titles(user_config_dir: Path) -> None:
    """``[sessions] model_titles = true`` in the user config (after what is there)."""
    path = user_config_dir / "config.toml"
    path.write_text(path.read_text() + "\n[sessions]\nmodel_titles = true\n")


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Parser crash on empty input", "Parser crash on empty input"),
        ('\n**"Fix parser crash."**\nmore words', "Fix parser crash"),
        ("Title: Retry logic redesign", "Retry logic redesign"),
        ("# " + "word " * 30, "word " * 11 + "word…"),
        ("\n  \n", ""),
    ],
)
def test_a_models_answer_gives_one_clean_line(answer: str, title: str) -> None:
    assert titles.model_title(answer) == title


async def test_with_model_titles_the_model_names_the_session_after_its_first_turn(
    project: Path, model_titles: None
) -> None:
    script = [Reply("Look at parse()."), Reply('"Parser crash on empty input."'), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("the parser crashes when the input is empty, why?")
        await session.turn("and now?")  # one title: no second request
        await session.close()
    assert len(server.requests) == 3
    asked = server.requests[1]
    assert not asked.get("tools")
    assert "the parser crashes when the input is empty" in asked["messages"][-1]["content"]
    [found] = session.conversation.sessions()
    assert (found.title, found.named, found.titled_by) == (
        "Parser crash on empty input",
        False,
        "model",
    )
    assert session.conversation.messages[-1].text == "ok"  # the conversation untouched
    assert len(session.conversation.messages) == 4
    session.conversation.rename("mine")  # a name given beats the model's
    assert session.conversation.sessions()[0].title == "mine"


async def test_model_titles_naming_a_model_asks_that_cheaper_model(
    project: Path, user_config_dir: Path
) -> None:
    """``model_titles = "MODEL"``: the title request goes to that model on the same server
    (the issue's "cheap call"); the turns stay with the session's model."""
    path = user_config_dir / "config.toml"
    path.write_text(path.read_text() + '\n[sessions]\nmodel_titles = "tiny-model"\n')
    script = [Reply("Look at parse()."), Reply("Parser crash"), Reply("ok")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="big-model")
        await session.turn("the parser crashes when the input is empty, why?")
        await session.turn("and now?")
        await session.close()
    assert [r["model"] for r in server.requests] == ["big-model", "tiny-model", "big-model"]
    assert not server.requests[1].get("tools")
    assert session.conversation.title == "Parser crash"
    assert session.conversation.titled_by == "model"


async def test_without_the_setting_no_title_is_asked_and_a_named_session_is_never_retitled(
    project: Path, user_config_dir: Path
) -> None:
    async with FakeOpenAI([Reply("one")]) as server:
        session = create_session(project, base_url=server.base_url)
        await session.turn("first")
        await session.close()
    assert len(server.requests) == 1  # nothing asked: the setting is off by default
    path = user_config_dir / "config.toml"
    path.write_text(path.read_text() + "\n[sessions]\nmodel_titles = true\n")
    async with FakeOpenAI([Reply("two")]) as server:
        named = create_session(project, base_url=server.base_url)
        named.conversation.rename("named first")
        await named.turn("a prompt")
        await named.close()
    assert len(server.requests) == 1
    assert named.conversation.title == "named first"


async def test_a_failing_title_request_leaves_the_first_prompt_as_the_title(
    project: Path, model_titles: None
) -> None:
    script = [Reply("fine"), Reply(status=500, error="down")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url)
        assert await session.turn("keep my words") == "fine"
        await session.close()
        assert len(server.requests) >= 2  # the title was asked for, and failed
    assert session.conversation.title == "keep my words"
    assert session.conversation.titled_by == ""


async def test_a_huge_or_planted_journal_is_read_only_at_its_start_and_end(
    project: Path,
) -> None:
    """A journal past ``READ_WHOLE`` (here 40 MB of nothing between a real session's
    start and an exchange and a /rename written at its end): its summary comes from the
    first and last bytes only (memory stays far below the file's size), says so, and
    still has the title given, the first prompt and the last exchange."""
    import time
    import tracemalloc

    script = [Reply("The first answer."), Reply("The last answer.")]
    async with FakeOpenAI(script) as server:
        session = create_session(project, base_url=server.base_url, model="fake-model")
        await session.turn("the very first prompt")
        await session.turn("the last prompt")
        await session.close()
    path = session.conversation.journal.path
    lines = path.read_text().splitlines()
    messages = [line for line in lines if line.startswith('{"type": "message"')]
    tail = [line for line in messages if "the last prompt" in line or "The last answer" in line]
    assert len(tail) == 2
    with path.open("r+b") as file:  # sparse: the hole takes no disk
        file.seek(path.stat().st_size + 40 * 1024 * 1024)
        file.write(b"\n" + "\n".join(tail).encode() + b"\n")
        file.write(json.dumps(titles.title_record("the huge one")).encode() + b"\n")
    assert path.stat().st_size > titles.READ_WHOLE
    tracemalloc.start()
    started = time.perf_counter()
    summary = titles.summarize(path)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert summary is not None
    assert peak < 16 * 1024 * 1024, peak  # reading it whole holds the 40 MB (and more)
    assert seconds < 2
    assert summary.partial and summary.as_data()["partial"] is True
    assert summary.title == "the huge one" and summary.named
    assert summary.first_prompt == "the very first prompt"
    assert (summary.last_prompt, summary.last_reply) == ("the last prompt", "The last answer.")
    assert summary.turns == 3  # both read at the start, the last again at the end
    assert summary.turns_label == "≥3 turns"
    assert summary.model == "fake-model"


def test_a_planted_journal_with_a_header_longer_than_the_head_is_no_session(
    project: Path,
) -> None:
    """A planted file whose one line (a session header, padded past ``READ_WHOLE``) does
    not end within ``HEAD``: no header is read, so it is not listed (a real header is a
    few hundred bytes)."""
    sessions_dir().mkdir(parents=True, exist_ok=True)
    planted = sessions_dir() / "planted.jsonl"
    header = {"type": "session", "directory": str(project.resolve()), "pad": ""}
    start, end = json.dumps(header).encode().split(b'""')
    with planted.open("wb") as file:
        file.write(start + b'"' + b"x" * (titles.READ_WHOLE + 1024) + b'"' + end + b"\n")
    assert titles.summarize(planted) is None
    assert all(s.id != "planted" for s in titles.list_summaries(project))
