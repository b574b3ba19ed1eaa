"""Integrations with agent frameworks, one module each; importing this package imports no framework.

Each module imports its framework at the top and, when it is missing, raises ImportError with the
``pip install 'muscle-mem[<extra>]'`` line to run.
"""
