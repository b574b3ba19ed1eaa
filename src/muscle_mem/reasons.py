"""Why a call missed the cache, and why a run was not stored, as enums beside the free text."""

from __future__ import annotations

from enum import Enum


class MissReason(str, Enum):
    """The kind of cause of a miss (``Result.miss_reason``); its value is what events and stats keep."""

    NO_TRAJECTORY = "no_trajectory"
    """Nothing is stored for this task (a new task)."""
    SIMILAR_TASK = "similar_task"
    """Nothing is stored for this task; a similar stored task is only a candidate, never replayed for it."""
    NO_SAFE_STEP = "no_safe_step"
    """The stored next steps gave no other reason not to be taken, and none was."""
    TOOL_NOT_REGISTERED = "tool_not_registered"
    """A stored step's tool is not registered with this engine."""
    VERSION_CHANGED = "version_changed"
    """A stored step's tool changed (its version) since it was recorded."""
    UNRESOLVED_VALUE = "unresolved_value"
    """A stored argument refers to a param or an earlier output this run does not have."""
    AMBIGUOUS_ORIGIN = "ambiguous_origin"
    """A stored argument's recorded origins disagree at replay."""
    PRE_CHECK_FAILED = "pre_check_failed"
    """No stored candidate's pre-check passed against the environment now."""
    PRE_CHECK_RAISED = "pre_check_raised"
    """A pre-check's capture or compare raised."""
    SNAPSHOT_UNHASHABLE = "snapshot_unhashable"
    """A keyed pre-check captured a snapshot that cannot be fingerprinted."""
    TOOL_RAISED = "tool_raised"
    """A replayed tool raised."""
    OBSERVATION_CHANGED = "observation_changed"
    """A replayed step's output (or the params) showed what no recorded run that went on from there saw."""
    POST_CHECK_FAILED = "post_check_failed"
    """A replayed tool's post-check failed (or its capture raised)."""
    ANSWER_UNRESOLVED = "answer_unresolved"
    """Every step replayed, but the recorded answer cannot be rebuilt from this run."""
    UNKEYABLE_TASK = "unkeyable_task"
    """The task's arguments cannot be encoded into a key, so nothing was looked up."""
    STORE_ERROR = "store_error"
    """The store could not be read."""
    STORE_UNAVAILABLE = "store_unavailable"
    """The store was unreachable (refused, timed out, connection lost), or had been since an outage began."""
    SHADOW = "shadow"
    """The engine is in shadow mode (or proven mode, the family not proven yet): the agent ran, and a
    replay was only compared with it (``Result.shadow``)."""


class NotStoredReason(str, Enum):
    """The kind of cause of a run that was not stored (``Result.not_stored_reason``)."""

    NO_TOOL_CALLS = "no_tool_calls"
    """The agent made no tool call: there is no trajectory to store."""
    UNREPLAYABLE = "unreplayable"
    """A value a replay could not rebuild faithfully (equal to two params, a param in another form…)."""
    UNSTORABLE_VALUE = "unstorable_value"
    """An argument, output, check snapshot or answer the codec cannot encode."""
    CHECK_CAPTURE_FAILED = "check_capture_failed"
    """A pre- or post-check's capture raised while recording."""
    TOOL_STILL_RUNNING = "tool_still_running"
    """A tool call was still running when the agent returned (a task it did not await)."""
    CALL_OUTSIDE_RUN = "call_outside_run"
    """A tool was called outside the run (another thread), so the trajectory could miss it."""
    FOREIGN_RUN = "foreign_run"
    """A tool was called inside another engine's run, so this trajectory would miss it."""
    SUB_TASK = "sub_task"
    """The agent handed a sub-task to the engine inside the run; its steps are not part of it."""
    CALLED_AFTER_RUN = "called_after_run"
    """Stored, then removed: a tool of the run was called after it ended (counted in metrics only)."""
    UNKEYABLE_TASK = "unkeyable_task"
    """The task's arguments cannot be encoded into a key."""
    SECRET_LEAK = "secret_leak"
    """A secret (a param's or a secret tool output's value, or a secret-looking text) would be stored in clear."""
    STORE_ERROR = "store_error"
    """The store refused the write."""
    STORE_UNAVAILABLE = "store_unavailable"
    """The store was unreachable (an outage): the run was served without recording it."""
    TOOL_RAISED = "tool_raised"
    """A tool raised and the agent went on without calling it again: it decided on an exception a replay cannot see."""
    AGENT_RAISED = "agent_raised"
    """The agent raised: the call returned no Result, and nothing was stored."""
    RUN_PROBLEM = "run_problem"
    """Another problem noted while recording (the text says what)."""
    REFUSED = "refused"
    """The agent or an integration kept the run out of the store (``current_run().refuse(why)``)."""
    FROZEN = "frozen"
    """The engine is frozen (``Engine(mode="frozen")``): it replays what is stored and writes nothing."""


class Problem(str):
    """A reason a run cannot be stored: its text, with its kind in ``kind``."""

    kind: NotStoredReason

    def __new__(cls, kind: NotStoredReason, text: str) -> Problem:
        problem = super().__new__(cls, text)
        problem.kind = kind
        return problem


def problem_kind(problem: str) -> NotStoredReason:
    """The kind of a run's problem (``RUN_PROBLEM`` for one noted as plain text)."""
    return problem.kind if isinstance(problem, Problem) else NotStoredReason.RUN_PROBLEM
