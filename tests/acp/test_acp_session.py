"""`tui-agent acp` driven by the package's own client side (issue 32): initialize, a new
session, a prompt whose reply streams, the slash commands advertised and run."""

from __future__ import annotations

from pathlib import Path

from acp_harness import RecordingClient, acp_session

from tui_agent.testing import FakeOpenAI, Reply


async def test_initialize_says_what_works(project: Path, model: FakeOpenAI) -> None:
    async with acp_session(project, model) as s:
        capabilities = s.init["agentCapabilities"]
        assert s.init["protocolVersion"] == 1
        assert s.init["agentInfo"]["name"] == "tui-agent"
        assert capabilities["loadSession"] is True
        prompts = capabilities["promptCapabilities"]
        assert prompts == {"image": True, "audio": False, "embeddedContext": True}
        assert capabilities["mcpCapabilities"]["http"] is True  # the mcp package is installed
        assert capabilities["mcpCapabilities"]["sse"] is True
        modes = s.new["modes"]
        assert modes["currentModeId"] == "ask"
        assert [m["id"] for m in modes["availableModes"]] == ["ask", "auto-edit", "plan"]


async def test_a_prompt_streams_its_reply(project: Path, model: FakeOpenAI) -> None:
    model.script += [Reply("Marmalade is made of bitter oranges.", thinking="Fruit.")]
    async with acp_session(project, model) as s:
        answer = await s.prompt("what is marmalade?")
        chunks = s.client.of("agent_message_chunk")
        thoughts = s.client.of("agent_thought_chunk")
        assert s.process.returncode is None
    assert answer == {"stopReason": "end_turn"}
    assert len(chunks) > 1, chunks  # streamed, not sent whole
    assert s.client.text() == "Marmalade is made of bitter oranges."
    assert "".join(t["content"]["text"] for t in thoughts) == "Fruit."
    [request] = model.requests
    assert request["messages"][-1] == {"role": "user", "content": "what is marmalade?"}
    assert {sid for sid, _ in s.client.updates} == {s.session_id}


async def test_sessions_are_journaled_under_their_id(project: Path, model: FakeOpenAI) -> None:
    from acp_harness import journal_files

    model.script += [Reply("one"), Reply("two")]
    async with acp_session(project, model) as s:
        await s.prompt("first")
        second = await s.conn.new_session(cwd=str(project), mcp_servers=[])
        await s.conn.prompt(session_id=second.session_id, prompt=[{"type": "text", "text": "2"}])
    names = {path.stem for path in journal_files()}
    assert {s.session_id, second.session_id} <= names
    assert s.session_id != second.session_id


async def test_commands_are_advertised_and_run(project: Path, model: FakeOpenAI) -> None:
    commands = project / ".tui-agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "shout.md").write_text(
        "---\ndescription: Shout it\nargument-hint: WORDS\n---\nSay $ARGUMENTS loudly.\n"
    )
    model.script += [Reply("LOUD")]
    async with acp_session(project, model, extra=("--trust",)) as s:
        await s.client.wait_for(
            lambda: bool(s.client.of("available_commands_update")), "the commands"
        )
        listed = {
            c["name"]: c for c in s.client.of("available_commands_update")[-1]["availableCommands"]
        }
        help_answer = await s.prompt("/help")
        helped = s.client.text()
        shouted = await s.prompt("/shout hello there")
    assert {"help", "todo", "permissions", "shout"} <= set(listed)
    assert listed["shout"]["description"].startswith("Shout it")
    assert listed["shout"]["input"] == {"hint": "WORDS"}
    assert help_answer == {"stopReason": "end_turn"}
    assert "/todo" in helped  # /help ran without the model: its output is the message
    assert shouted == {"stopReason": "end_turn"}
    [request] = model.requests  # only /shout asked the model
    assert "Say hello there loudly." in request["messages"][-1]["content"]
    assert s.client.text().endswith("LOUD")


async def test_an_unknown_session_is_an_error(project: Path, model: FakeOpenAI) -> None:
    import acp

    async with acp_session(project, model) as s:
        try:
            await s.conn.prompt(session_id="nope", prompt=[acp.text_block("hi")])
        except acp.RequestError as exc:
            assert exc.code == -32602
            assert "no such session" in str(exc.data)
        else:
            raise AssertionError("a prompt to an unknown session was answered")
    assert model.requests == []


async def test_untrusted_project_code_is_not_loaded_and_the_client_is_told(
    project: Path, model: FakeOpenAI
) -> None:
    plugins = project / ".agents" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "mine.py").write_text("raise SystemExit('project code ran')\n")
    model.script += [Reply("ok")]
    client = RecordingClient()
    async with acp_session(project, model, client) as s:
        await s.client.wait_for(lambda: "not trusted" in s.client.text(), "the trust message")
        said = s.client.text()
        answer = await s.prompt("hello")
    assert answer == {"stopReason": "end_turn"}
    assert str(project) in said
    assert ".agents/plugins/mine.py" in said
    assert "tui-agent trust" in said


async def test_the_model_is_a_config_option(project: Path, model: FakeOpenAI) -> None:
    model.script += [Reply("from the large one")]
    async with acp_session(project, model) as s:
        [option] = s.new["configOptions"]
        changed = await s.conn.set_config_option(
            config_id="model", session_id=s.session_id, value="fake-model-large"
        )
        await s.prompt("hi")
    assert option["id"] == "model" and option["category"] == "model"
    assert option["currentValue"] == "fake-model"
    assert [o["value"] for o in option["options"]] == ["fake-model", "fake-model-large"]
    assert changed.config_options[0].current_value == "fake-model-large"
    assert model.requests[-1]["model"] == "fake-model-large"
