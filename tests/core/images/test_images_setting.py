"""``[models."X"] images`` must be true or false (issue 33): any other value is a config
problem said at load, as other bad settings are (the ``[models]`` table is then set aside
and the defaults apply), not silently read as "not said". The real session load."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write

from tui_agent import create_session
from tui_agent.core.project.config import user_config_file


def problems_with(project: Path, text: str) -> list[str]:
    write(user_config_file(), text)
    session = create_session(project)
    try:
        return [str(p) for p in session.extensions.config_problems]
    finally:
        session.conversation.journal.close()


@pytest.mark.parametrize(
    ("value", "shown"), [('"yes"', "'yes'"), ("1", "1"), ('"false"', "'false'")]
)
def test_a_non_boolean_images_setting_is_a_config_problem(
    project: Path, value: str, shown: str
) -> None:
    found = problems_with(project, f'[models."qwen3:8b"]\nimages = {value}\n')
    assert any(
        f'models."qwen3:8b".images must be true or false, not {shown}' in p for p in found
    ), found


def test_good_model_tables_are_no_problem(project: Path) -> None:
    text = (
        '[models."qwen3:8b"]\nimages = false\ncontext_window = 32768\n'
        '[models."gpt-4.1"]\nimages = true\nprice = { input = 2.0, output = 8.0 }\n'
    )
    assert problems_with(project, text) == []


def test_a_model_entry_that_is_no_table_is_said(project: Path) -> None:
    found = problems_with(project, 'models = { "gpt-4.1" = "vision" }\n')
    assert any("models.\"gpt-4.1\" must be a table, not 'vision'" in p for p in found), found
