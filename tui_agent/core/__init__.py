"""The core of tui-agent: everything that runs without a screen.

Nothing in this package imports Textual; the UI and the headless runner both sit on top.
"""
