"""The look-up of a call's task: its stored steps, or the ending that says why there are none to replay."""

from __future__ import annotations

import logging

from muscle_mem.cache._trajectories import TrajectoryCache
from muscle_mem.metrics import Metrics
from muscle_mem.model._text_slots import Template
from muscle_mem.reasons import MissReason, NotStoredReason, Problem
from muscle_mem.record._run import Run
from muscle_mem.record._task import plain_task
from muscle_mem.record._task_templates import TemplateIndex
from muscle_mem.replay._drivers import Ending
from muscle_mem.replay._step_index import TaskSteps
from muscle_mem.stores import StoreUnavailable

logger = logging.getLogger(__name__)

GOING_ON = Ending()
"""The ending of a call before its replay: none yet (immutable, so one for all calls)."""


class TaskLookup:
    """Looks up a call's task: exact key, else a live template; a store that cannot be read is an ending."""

    def __init__(
        self,
        cache: TrajectoryCache,
        metrics: Metrics,
        templates: TemplateIndex | None,
    ) -> None:
        self.cache = cache
        self.metrics = metrics
        self.templates = templates
        """The engine's templates (None: a plain-text task is looked up by its key only)."""

    def find(self, run: Run, unkeyable: str | None) -> tuple[Run, TaskSteps | None, Ending]:
        """The run, its task's stored steps, or None and the ending that says why there are none.

        ``unkeyable``: why the task has no key (redacted), if it has none. The agent then handles it.
        """
        if unkeyable is not None:
            logger.error("the agent handles task %r uncached: %s", run.task, unkeyable)
            run.problems.append(Problem(NotStoredReason.UNKEYABLE_TASK, unkeyable))
            return run, None, Ending(reason=unkeyable, kind=MissReason.UNKEYABLE_TASK)
        cache = self.cache
        cache.observe(run)
        try:
            steps = cache.lookup(run)
            if run.text is not None and self.templates is not None and not len(steps):
                template = self.templates.find(run.text, run.tags)
                if template is not None:
                    run = _templated(run, template)
                    steps = cache.lookup(run)
            return run, steps, GOING_ON
        except StoreUnavailable as exc:  # logged once per outage, by the breaker
            why = run.redact(f"the store is unavailable: {exc}")
            return run, None, Ending(reason=why, kind=MissReason.STORE_UNAVAILABLE)
        except Exception as exc:
            self.metrics.add("store_errors")
            logger.exception("store lookup failed; the agent handles this task")
            why = run.redact(f"the store could not be read: {exc!r}")
            return run, None, Ending(reason=why, kind=MissReason.STORE_ERROR)


def _templated(exact: Run, template: Template) -> Run:
    """The run of a plain-text task served by a template: its slots are its params."""
    task = plain_task(template.key, template.text, exact.tags, template.params)
    run = Run(exact.owner, task._replace(whole_text=exact.text))
    run.template, run.relevance = template, exact.relevance
    return run
