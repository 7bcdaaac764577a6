"""Pure engines: search (glob, grep, list), ignore rules, regex dialects, tolerant edits,
the project's file list. No session, no events.

May import: ``core.util`` only.
"""
