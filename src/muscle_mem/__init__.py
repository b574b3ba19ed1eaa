"""muscle-mem: muscle memory for AI agents.

Record the tool calls an agent makes, and replay them without the LLM when the same task comes back
and every Check says the environment still matches.
"""

import logging

from muscle_mem.check import Check
from muscle_mem.engine import Engine
from muscle_mem.errors import MuscleMemError
from muscle_mem.model.codec import CodecError, Secret
from muscle_mem.model.trajectory import RecordError
from muscle_mem.model.verdict import Shadow, Verdict
from muscle_mem.reasons import MissReason, NotStoredReason
from muscle_mem.record._run_view import RunView, current_run
from muscle_mem.record.tools import source_version
from muscle_mem.result import Result, StepView
from muscle_mem.session import Session, SessionAbandoned
from muscle_mem.stores.base import StoreError

__all__ = [
    "Check",
    "CodecError",
    "Engine",
    "MissReason",
    "MuscleMemError",
    "NotStoredReason",
    "RecordError",
    "Result",
    "RunView",
    "Secret",
    "Session",
    "SessionAbandoned",
    "Shadow",
    "StepView",
    "StoreError",
    "Verdict",
    "current_run",
    "source_version",
]

logging.getLogger("muscle_mem").addHandler(logging.NullHandler())  # the library never prints
__version__ = "0.8.0"
"""The version of muscle-mem: the one place it is written (pyproject.toml and the CLI read it)."""
