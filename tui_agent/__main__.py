from tui_agent.cli import main

raise SystemExit(main())
