"""Agent definitions: Markdown files with YAML front matter (tui-agent's own and Claude
Code's, opencode's and Gemini CLI's, read where those agents keep them) turned into
``AgentDefinition``s with tui-agent's tool names, plus the bundled ``general`` and
``explore``. Definitions only: running an agent is ``delegation``'s job.

May import: ``project`` (the trust registry of project code), ``util``.
"""

from .definitions import AgentDefinition
from .loading import AgentSet, Place, load_agents, project_places, user_places

__all__ = ["AgentDefinition", "AgentSet", "Place", "load_agents", "project_places", "user_places"]
