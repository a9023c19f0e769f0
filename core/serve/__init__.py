"""Serving agents: the tools (repo_map, find_symbol, find_references, file_outline,
related_files) over a live, incrementally updated index, and ``repomapper mcp`` exposing them
over MCP stdio. Only :mod:`repomapper.serve.server` imports the ``mcp`` SDK."""
