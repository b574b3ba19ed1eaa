"""Secrets: declared ones (params, tool outputs) and those found by their shape."""
