"""What every subcommand shares: the store it works on, and the error for bad input."""

from __future__ import annotations

import argparse
import os

DEFAULT_STORE = "sqlite:///.muscle-mem/cache.db"
"""The CLI's store when neither ``--store`` nor ``MUSCLE_MEM_STORE`` names one: a file in the working directory."""
STORE_ENV = "MUSCLE_MEM_STORE"


class UsageError(Exception):
    """Bad command-line input: reported in one line, exit status 2."""


def store_url(args: argparse.Namespace) -> str:
    """The store a command works on: ``--store``, else ``$MUSCLE_MEM_STORE``, else :data:`DEFAULT_STORE`."""
    return str(args.store or os.environ.get(STORE_ENV) or DEFAULT_STORE)
