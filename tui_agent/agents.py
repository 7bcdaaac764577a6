"""Public: agent definitions: the agent files (tui-agent's, Claude Code's, opencode's and
Gemini CLI's) read into ``AgentDefinition``s with tui-agent's tool names, the bundled
``general`` and ``explore``, and the table ``/agents`` shows."""

from .core.agents.definitions import AgentDefinition
from .core.agents.listing import agents_markdown, as_data
from .core.agents.loading import AgentSet, load_agents

__all__ = ["AgentDefinition", "AgentSet", "agents_markdown", "as_data", "load_agents"]
