"""The toolbox (register, validate, run and announce tool calls), argument validation,
``schema``, tool files (``@tool``) and how tools are described.

May import: ``protocol``, ``util``.
"""
