"""How an engine call ends: a hit or a miss, counted, journaled, and the agent's run stored."""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from muscle_mem.cache._events import Journal, hit_event, miss_event
from muscle_mem.cache._near_tasks import NearTasks
from muscle_mem.cache._store_writes import Writer
from muscle_mem.cache._trajectories import TrajectoryCache
from muscle_mem.cache.shadow_report import ShadowBook
from muscle_mem.metrics import Metrics
from muscle_mem.model import codec
from muscle_mem.model._frozen_instances import fast_instance
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.model.verdict import Shadow, Verdict
from muscle_mem.reasons import MissReason, NotStoredReason, Problem
from muscle_mem.record._dataflow import trajectory_of
from muscle_mem.record._run import Run
from muscle_mem.record._task_templates import TemplateIndex, induce, stored_form
from muscle_mem.replay._drivers import Ending, Replay
from muscle_mem.replay._replayer import Replayer
from muscle_mem.replay._shadow import judge
from muscle_mem.replay._similar import agrees
from muscle_mem.replay._step_index import TaskSteps
from muscle_mem.result import Result
from muscle_mem.stores import StoreUnavailable
from muscle_mem.stores.base import Event

if TYPE_CHECKING:
    from muscle_mem.telemetry import Telemetry

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Call:
    """One engine call in progress."""

    run: Run
    task: TaskSteps | None
    replay: Replay | None
    """The replay to drive, or None when there is nothing to look up (``ending`` says why)."""
    ending: Ending
    started: float
    agent_started: float = 0.0
    shadowed: Replayer | None = None
    """In a shadow run: the replayer whose params and context judge what a replay of ``task`` would have done."""


_FROZEN: tuple[str | None, Problem | None] = (
    None,
    Problem(NotStoredReason.FROZEN, "the engine is frozen (mode='frozen'): it stores nothing"),
)
"""What storing a run comes to in a frozen engine: nothing stored, and why."""


class Outcomes:
    """Turns the end of an engine call into its :class:`Result`, with its bookkeeping."""

    def __init__(
        self,
        cache: TrajectoryCache,
        metrics: Metrics,
        journal: Journal,
        writer: Writer | None = None,
        templates: TemplateIndex | None = None,
    ) -> None:
        self.cache = cache
        self.metrics = metrics
        self.journal = journal
        self.writer = writer
        """Where store writes go when they are made behind the caller (``Engine(write_behind=True)``)."""
        self.telemetry: Telemetry | None = None
        """Where calls are reported to OpenTelemetry (``Engine(telemetry=True)``), else None."""
        self.frozen = False
        """Whether nothing is written: no run stored, no use statistics, no event (``Engine(mode="frozen")``)."""
        self.book: ShadowBook | None = None
        """Where shadow verdicts are noted at once (``Engine(mode="proven")``), else None."""
        self.near: NearTasks | None = NearTasks()
        """The tasks stored lately, to say when a miss differs from one only in a number or a quoted
        value (a forgotten ``params=``); None where the task text does not decide (``match="tags"``)."""
        self.templates = templates
        """The engine's templates, which a plain-text task's run may propose one to (None: no templates)."""

    def hit(self, call: Call, ending: Ending) -> Result:
        """The result of a full hit, its event and its use statistics written."""
        run, task, trajectory = call.run, call.task, ending.trajectory
        assert trajectory is not None and task is not None
        elapsed = time.perf_counter() - call.started
        saved = trajectory.agent_seconds - elapsed
        saved = saved if saved > 0.0 else 0.0  # max(0.0, saved) without its call
        steps = len(run.calls)
        self.metrics.hit(steps, saved, trajectory.tokens)
        if not self.frozen:  # inline: the hit path
            self.journal.add(hit_event(run, trajectory.id, steps, elapsed, saved, trajectory.tokens))
            try:
                self.cache.touch(run, task, trajectory, saved)
            except StoreUnavailable:
                pass  # the outage is logged once, by the breaker
            except Exception:
                self.metrics.add("store_errors")
                logger.exception("could not update the use statistics of trajectory %s", trajectory.id)
        if logger.isEnabledFor(logging.DEBUG):  # one call instead of two when it is not
            logger.debug("hit, %s replayed from trajectory %s", _steps(steps), trajectory.id)
        if self.telemetry is not None:
            self.telemetry.hit(run, call.started, trajectory.tokens, trajectory.id)
        return fast_instance(
            Result,
            hit=True,
            output=ending.answer,
            steps_replayed=steps,
            trajectory_id=trajectory.id,
            elapsed=elapsed,
            tokens_saved=trajectory.tokens,
            template=run.template.text if run.template is not None else None,
            slots=run.template.params if run.template is not None else None,
            steps=tuple(run.calls),
        )

    def agent_raised(self, call: Call, ending: Ending) -> None:
        """Count and journal a run whose agent raised (nothing is stored)."""
        run = call.run
        agent_seconds = time.perf_counter() - call.agent_started
        replayed = sum(c.replayed for c in run.calls)
        self.metrics.miss(replayed, ending.kind, agent_seconds, run.tokens)
        refused = Problem(NotStoredReason.AGENT_RAISED, "the agent raised")
        self.metrics.not_stored(refused.kind)
        if not self.frozen:
            self.journal.add(miss_event(run, ending, replayed, agent_seconds, agent_seconds, None, refused))
        logger.info("the agent raised; nothing is stored for task %r", run.task)
        if self.telemetry is not None:
            self.telemetry.miss(run, call.started, ending, replayed, raised=True)

    def miss(self, call: Call, ending: Ending, output: Any) -> Result:
        """The result of a miss, the agent's run stored (or why not) and journaled."""
        run, started, agent_started = call.run, call.started, call.agent_started
        near = self.near
        if near is not None and ending.kind is MissReason.NO_TRAJECTORY:
            ending = self._near_miss(run, ending, near)
        shadow = self._judge(call, output) if call.shadowed is not None else None
        now = time.perf_counter()
        replayed = sum(c.replayed for c in run.calls)
        self.metrics.miss(replayed, ending.kind, now - agent_started, run.tokens)
        running = run.seal()
        if running:
            run.problems.append(
                Problem(
                    NotStoredReason.TOOL_STILL_RUNNING,
                    f"{running} tool call(s) were still running when the agent returned (a task or a thread "
                    "it did not wait for): the trajectory would miss them",
                )
            )
        stored_id, refused = _FROZEN if self.frozen else self._store(run, output, now - started)
        run.stored_id = stored_id
        if stored_id is not None and run.text is not None and run.template is None:
            self._propose_template(run, stored_id, output, now - started)
        if refused is not None:
            self.metrics.not_stored(refused.kind)
        if near is not None and stored_id is not None and not run.hidden():
            near.remember(run.task, run.tags)
        if run.late is not None:  # a tool called while the run was being stored: it misses the call
            self.stray_call(run.late, run)
            stored_id = run.stored_id
        elapsed = time.perf_counter() - started
        if not self.frozen:
            event = miss_event(
                run, ending, replayed, elapsed, now - agent_started, stored_id, refused, shadow
            )
            self.journal.add(event)
            if shadow is not None and self.book is not None:
                self.book.note(event)
            if shadow is not None and shadow.verdict is Verdict.DISAGREED:
                self._disagreed_in_template(run, event)
                self._flush_disagreement()
        if logger.isEnabledFor(logging.INFO):
            logger.info("miss (%s); %s replayed, then the agent", ending.reason, _steps(replayed))
        if self.telemetry is not None:
            self.telemetry.miss(run, started, ending, replayed)
        return fast_instance(
            Result,
            hit=False,
            output=output,
            steps_replayed=replayed,
            fallback=True,
            reason=ending.reason,
            trajectory_id=stored_id,
            elapsed=time.perf_counter() - started,
            stored=stored_id is not None and self.writer is None,
            storing=stored_id is not None and self.writer is not None,
            not_stored=str(refused) if refused is not None else None,
            not_stored_reason=refused.kind if refused is not None else None,
            miss_reason=ending.kind,
            miss_tool=ending.tool,
            tokens_spent=run.tokens,
            template=run.template.text if run.template is not None else None,
            slots=run.template.params if run.template is not None else None,
            steps=tuple(run.calls),
            shadow=shadow,
        )

    def _flush_disagreement(self) -> None:
        """Write a disagreement to the store now: a proven worker must not replay the family in the
        second a batched journal would keep it (a failure is the journal's: logged, kept in an outage)."""
        try:
            self.journal.flush()
        except Exception:
            logger.debug("could not write a shadow disagreement yet", exc_info=True)

    def _disagreed_in_template(self, run: Run, event: Event) -> None:
        """A plain text's own family disagreed: so did the template its text follows (the same task),
        which is sent back to shadow too (on every worker: the disagreement is journaled under its key)."""
        template = self.templates.family_of(run) if self.templates is not None else None
        if template is None:
            return
        copy = dataclasses.replace(event, task_key=template.key, task=template.text)
        self.journal.add(copy)
        if self.book is not None:
            self.book.note(copy)

    def _judge(self, call: Call, output: Any) -> Shadow | None:
        """What a replay of the call's task would have done in the agent's run (None if that cannot be told)."""
        run, task, replayer = call.run, call.task, call.shadowed
        assert task is not None and replayer is not None
        try:
            return judge(replayer, task, run, output)
        except Exception:
            logger.exception("could not tell what a replay of task %r would have done", run.task)
            return None

    @staticmethod
    def _near_miss(run: Run, ending: Ending, near: NearTasks) -> Ending:
        """The ending of a miss with no trajectory, saying so when a stored task differs only in a value."""
        differences = near.differences(run.task, run.tags)
        if differences is None:
            return ending
        hint = run.redact(f"{differences}: declare it as a param")
        return dataclasses.replace(ending, reason=f"{ending.reason}; {hint}")

    def _store(self, run: Run, output: Any, seconds: float) -> tuple[str | None, Problem | None]:
        """Store what the run did: the new trajectory's id, or None and why it was not stored."""
        trajectory = trajectory_of(run, output, seconds)
        if isinstance(trajectory, Problem):
            return None, trajectory
        if run.similar is not None:
            self._compare_similar(trajectory, run.similar)
        if run.template is not None and run.text is not None:
            trajectory = stored_form(trajectory, run.text)
            if self.templates is not None:
                self.templates.note(run.template)
        if self.writer is not None:
            self.writer.submit(functools.partial(self._write, trajectory, run))
            return trajectory.id, None
        problem = self._add(trajectory, run)
        return (None, problem) if problem is not None else (trajectory.id, None)

    def _compare_similar(self, trajectory: Trajectory, similar: TaskSteps) -> None:
        """Count whether the agent's run agreed with the similar task's runs (a replay would have been right)."""
        try:
            agreed = agrees(trajectory, similar)
        except Exception:  # a stored step that cannot be read now: no evidence either way
            logger.debug("the similar task %r could not be compared", similar.text, exc_info=True)
            return
        self.metrics.add("similar_agreed" if agreed else "similar_disagreed")
        logger.info(
            "the agent's run of task %r %s the runs of the similar task %r",
            trajectory.task,
            "agreed with" if agreed else "differed from",
            similar.text,
        )

    def _propose_template(self, run: Run, stored_id: str, output: Any, seconds: float) -> None:
        """Store the run once more under the template its text proposes, if data flow finds one."""
        assert run.text is not None
        if self.templates is None:
            return
        proposed = induce(run, run.text, output, seconds, self.templates.prefix, stored_id)
        if proposed is None:
            return
        template, trajectory = proposed
        self.templates.note(template)
        if self.writer is not None:
            self.writer.submit(functools.partial(self._write, trajectory, run))
        else:
            problem = self._add(trajectory, run)
            if problem is not None:
                logger.info("the run of task %r was not stored as a template run: %s", run.task, problem)

    def _add(self, trajectory: Trajectory, run: Run) -> Problem | None:
        """Store the run's trajectory: None, or why the store did not take it."""
        try:
            self.cache.add(trajectory, run.relevance)
        except StoreUnavailable as exc:
            return Problem(NotStoredReason.STORE_UNAVAILABLE, run.redact(f"the store is unavailable: {exc}"))
        except codec.CodecError as exc:  # what only a store in this process keeps (a Check's object)
            logger.warning(
                "the store cannot keep the trajectory of task %r: %s", run.task, run.redact(str(exc))
            )
            return Problem(NotStoredReason.UNSTORABLE_VALUE, run.redact(f"the store cannot keep it: {exc}"))
        except Exception as exc:
            self.metrics.add("store_errors")
            logger.exception("could not write the trajectory of task %r to the store", run.task)
            return Problem(
                NotStoredReason.STORE_ERROR, run.redact(f"the store could not be written: {exc!r}")
            )
        return None

    def _write(self, trajectory: Trajectory, run: Run) -> None:
        """Store a trajectory on the writer's thread; a failure is logged and counted, as a run not stored."""
        problem = self._add(trajectory, run)
        if problem is not None:
            logger.warning("the trajectory of task %r was not stored: %s", run.task, problem)
            self.metrics.not_stored(problem.kind)

    def _remove(self, trajectory_id: str) -> None:
        try:
            self.cache.remove(trajectory_id)
        except Exception as exc:  # removed before the next lookup reads the store
            logger.warning("could not remove trajectory %s yet: %s", trajectory_id, exc)

    def stray_call(self, tool: str, ended: Run) -> None:
        """Remove the trajectory of a run whose agent had returned when one of its tools was called.

        It misses the call; a run not stored yet noted the problem and is not stored.
        """
        if ended.stored_id is not None:
            logger.warning(
                "tool %r was called after the run of task %r ended (a task or a thread the agent "
                "did not wait for?); its trajectory misses the call and is removed",
                tool,
                ended.task,
            )
            if self.writer is not None:  # after its write, which the writer makes first
                self.writer.submit(functools.partial(self._remove, ended.stored_id))
            else:
                self._remove(ended.stored_id)
            self.metrics.not_stored(NotStoredReason.CALLED_AFTER_RUN)
            ended.stored_id = None


def _steps(count: int) -> str:
    """``1 step``, ``3 steps``."""
    return f"{count} step" if count == 1 else f"{count} steps"
