"""muscle-mem: muscle memory for AI agents.

Record the tool calls an agent makes, and replay them without the LLM when the same task comes back
and every Check says the environment still matches.
"""

import logging

from muscle_mem.check import Check
from muscle_mem.codec import Secret
from muscle_mem.engine import Engine
from muscle_mem.reasons import MissReason, NotStoredReason
from muscle_mem.recording import Run, current_run
from muscle_mem.result import Result

__all__ = ["Check", "Engine", "MissReason", "NotStoredReason", "Result", "Run", "Secret", "current_run"]

logging.getLogger("muscle_mem").addHandler(logging.NullHandler())  # the library never prints
__version__ = "0.2.0"
