"""The trajectory cache of one engine: its store and index, bounded by an eviction policy.

One place for what happens to stored trajectories: lookup (with the semantic fallback), adding a
new one and enforcing the bounds, the use statistics a hit writes (behind, in batches, with a
``sync_interval``: see :mod:`muscle_mem.cache._usage`), and the TTL. Trajectories a
replay in progress is following are never evicted (``protected``). Every store operation goes
through the engine's :class:`~muscle_mem.cache._breaker.Breaker`: while the store is unavailable, each raises
:class:`~muscle_mem.stores.StoreUnavailable` at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from muscle_mem.cache._breaker import Breaker
from muscle_mem.cache._usage import UsageLog
from muscle_mem.embed import TaskMatcher
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import Policy, RecallAware, store_admit, task_hit
from muscle_mem.eviction.relevance import TaskStream
from muscle_mem.metrics import Metrics
from muscle_mem.model._task_keys import in_namespace
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.record._run import Run
from muscle_mem.record._task_templates import key_slots, with_template_runs
from muscle_mem.replay._decoded_trajectories import DECODED_SIZE, Decoded
from muscle_mem.replay._step_index import Index, TaskSteps
from muscle_mem.replay._stored_step_index import INDEX_SIZE, LazyIndex
from muscle_mem.stores import CoreStore, StepIndexed, StoreUnavailable, TaskRecall, UsageBatched

logger = logging.getLogger(__name__)

NAMED_KEPT = 10_000
"""Skipped trajectories remembered as already named in the log (each is named once)."""
RECALL_KEPT = 5_000
"""Tasks a store's shared recall keeps when this engine's policy does not read it (others may)."""
RECALL_SLACK = 10
"""The store's shared recall may outgrow the policy's ``history`` by a tenth: pruned once per so many adds."""


class TrajectoryCache:
    """Lookup, admission within bounds, use statistics and expiry of an engine's trajectories."""

    def __init__(
        self,
        store: CoreStore,
        policy: Policy,
        bounds: Bounds,
        metrics: Metrics,
        protected: Callable[[], frozenset[str]],
        breaker: Breaker,
        *,
        stream: TaskStream | None = None,
        matcher: TaskMatcher | None = None,
        namespace: str | None = None,
        index_size: int = INDEX_SIZE,
        decoded_size: int = DECODED_SIZE,
        sync_interval: float = 0.0,
    ) -> None:
        self.store = store
        self.policy = policy
        self._admit = store_admit(policy, store)
        """Scores a new recording (with the store's shared recall and tuning, if both keep them)."""
        self._hit_task = task_hit(policy)
        self._recall = store if isinstance(store, TaskRecall) else None
        """The store's shared recall (None: the store keeps none)."""
        self._recall_aware = policy if isinstance(policy, RecallAware) else None
        """The policy, if it admits by the store's recall (else its own, if any)."""
        self._unpruned = 0
        """Adds since the shared recall was last pruned."""
        self.bounds = bounds
        self.index: Index | LazyIndex = (
            LazyIndex(store, Decoded(store, decoded_size, self.skipped), index_size, sync_interval)
            if isinstance(store, StepIndexed)
            else Index(store, self.skipped)
        )
        self.usage_log = (
            UsageLog(store, policy, breaker, sync_interval)
            if sync_interval > 0 and isinstance(store, UsageBatched)
            else None
        )
        """Hits written behind (None: each hit writes its use statistics at once)."""
        self._metrics = metrics
        self._protected = protected
        self._breaker = breaker
        self._doomed: set[str] = set()
        """Trajectories to remove whose removal failed: removed before the store is used again."""
        breaker.before_resuming.append(self._remove_doomed)
        self._stream = stream
        self._matcher = matcher
        self._namespace = namespace
        self._next_expiry = 0.0
        self._named: OrderedDict[str, None] = OrderedDict()
        self._refused_texts: set[str] = set()
        """Tasks whose stored text was refused (each named once)."""
        self._lock = threading.Lock()

    def observe(self, run: Run) -> None:
        """Note the task in the recent task stream (its relevance feeds the eviction policy)."""
        if self._stream is not None:
            run.relevance = self._stream.observe(run.task_key, run.task)

    def lookup(self, run: Run) -> TaskSteps:
        """The stored trajectories of the run's task, after applying the TTL.

        With semantic matching, a similar task with the same tags, when the task has none, is noted on
        the run (``run.similar``) as a candidate: its trajectories are not replayed (see :mod:`similar`).
        """
        breaker = self._breaker
        if breaker.cause is not None:
            breaker.refuse()
        try:  # the breaker's scope, inline: the hit path
            if self._doomed:
                self._remove_doomed()
            if self.bounds.ttl is not None:
                self._expire()
            task = self.index.lookup(run.task_key)
            if len(task) or self._matcher is None:
                return task
            if task.root.groups:  # the store's count says none, its steps say otherwise: not a similar task's
                return task
            tags = frozenset(run.tags)
            known = {
                k: text
                for k, text in self.store.tasks().items()
                if in_namespace(k, self._namespace)
                and key_slots(k) is None  # a template's runs need its slots
            }
            for similar in self._matcher.candidates(run.task, known):
                found = self.index.lookup(similar) if similar != run.task_key else task
                if not len(found) or found.tags != tags:  # tags partition the cache, semantic matching too
                    continue
                if found.text != known[similar]:  # what was compared is not what the records say
                    self._refuse_text(similar)
                    continue
                logger.debug(
                    "task %r is similar to stored task %r: a candidate, not replayed", run.task, found.text
                )
                run.similar = found
                return task
            return task
        except StoreUnavailable as exc:
            breaker.trip(exc)
            raise

    def count(self, task_key: str) -> int:
        """How many trajectories a task key holds, as a lookup reads them."""
        with self._breaker:
            return len(self.index.lookup(task_key))

    def add(self, trajectory: Trajectory, relevance: float) -> None:
        """Store a new trajectory, then evict what the bounds no longer hold (raises if the store fails)."""
        now = time.time()
        with self._breaker:
            usage = self._admit(trajectory.task_key, now, relevance)
            self.store.add(trajectory, usage)
            self._metrics.add("stored")
            self._invalidate(trajectory.task_key)
            bounds = self.bounds
            if self.usage_log is not None and bounds.evicts:
                self.usage_log.flush()  # eviction ranks by every hit noted, written or not
            evicted = (
                bounds.enforce(self.store, now, self._protected() | {trajectory.id}) if bounds.limits else []
            )
            self._prune_recall()
        if evicted:
            self._invalidate(None)
            self._metrics.add("evicted", len(evicted))

    def _prune_recall(self) -> None:
        """Forget the store's oldest remembered tasks past the policy's ``history`` (once in a while).

        With a policy that does not read the recall, the store's is kept to :data:`RECALL_KEPT`.
        """
        if self._recall is None:
            return
        keep = RECALL_KEPT if self._recall_aware is None else self._recall_aware.history
        with self._lock:
            self._unpruned += 1
            due = self._unpruned * RECALL_SLACK >= max(keep, RECALL_SLACK)
            if due:
                self._unpruned = 0
        if due:
            self._recall.forget_recalled(keep)

    def touch(self, run: Run, task: TaskSteps, trajectory: Trajectory, saved: float) -> None:
        """Write the use statistics of a hit and make the trajectory the task's first candidate.

        With a usage log, the hit is only noted (written behind).
        """
        now = time.time()
        if self.usage_log is not None:
            self.usage_log.hit(trajectory.task_key, trajectory.id, now, run.relevance, saved)
            task.promote(trajectory.id)
            return
        breaker = self._breaker
        if breaker.cause is not None:
            breaker.refuse()
        try:  # the breaker's scope, inline: the hit path
            usage = self.store.usage(trajectory.id)  # as stored: other processes' hits included
            if usage is None:
                return
            updated = self._hit_task(trajectory.task_key, usage, now, run.relevance, saved)
            self.store.touch(
                trajectory.id,
                now=now,
                saved_seconds=saved,
                priority=updated.priority,
                attention=updated.attention,
            )
        except StoreUnavailable as exc:
            breaker.trip(exc)
            raise
        task.promote(trajectory.id)

    def skipped(self, trajectory_ids: Iterable[str], why: str | None) -> None:
        """Count stored trajectories a call had to leave out (``store_errors``); name each once.

        ``why`` is None when the store has named them already.
        """
        ids = list(trajectory_ids)
        self._metrics.add("store_errors", max(len(ids), 1))
        with self._lock:
            new = [tid for tid in ids if tid not in self._named]
            for tid in ids:
                self._named[tid] = None
            while len(self._named) > NAMED_KEPT:
                self._named.popitem(last=False)
        if why is not None and (new or not ids):
            logger.warning("skipping trajectory %s: %s", ", ".join(new) or "(unknown)", why)

    def _refuse_text(self, task_key: str) -> None:
        """Count a task whose stored text is not its records' (``rejected_records``); name it once."""
        with self._lock:
            if task_key in self._refused_texts:
                return
            self._refused_texts.add(task_key)
        self._metrics.add("rejected_records")
        logger.warning(
            "refusing the stored text of task %r: it is not the text its trajectories were recorded for",
            task_key,
        )

    def remove(self, trajectory_id: str) -> None:
        """Remove one run (a run it missed a call of), its template copy too; if that fails, before the next lookup."""
        doomed = with_template_runs([trajectory_id])
        try:
            with self._breaker:
                self.store.remove(doomed)
            self._invalidate(None)
        except Exception:
            with self._lock:
                self._doomed.update(doomed)
            raise

    def flush(self) -> None:
        """Write the hits kept behind (if any) now."""
        if self.usage_log is not None:
            self.usage_log.flush()

    def _invalidate(self, task_key: str | None) -> None:
        """This process changed a task (None: some tasks): read its state again at its next lookup."""
        if isinstance(self.index, LazyIndex):
            self.index.invalidate(task_key)

    def _remove_doomed(self) -> None:
        with self._lock:
            doomed = list(self._doomed)
        if not doomed:
            return
        self.store.remove(doomed)
        self._invalidate(None)
        with self._lock:
            self._doomed.difference_update(doomed)

    def _expire(self) -> None:
        """Apply the TTL (at most every tenth of the TTL, and at least every second)."""
        ttl = self.bounds.ttl
        if ttl is None or time.monotonic() < self._next_expiry:
            return
        self._next_expiry = time.monotonic() + min(1.0, ttl / 10)
        now = time.time()
        protected = self._protected()
        expired = self.bounds.expire(self.store, now, protected)
        if isinstance(self.index, LazyIndex):  # by the records' own times too (a row's may lie)
            stale = self.index.decoded.expire(now - ttl, protected)
            if stale:
                self.store.remove(stale)
                expired += [tid for tid in stale if tid not in expired]
        if expired:
            self._invalidate(None)
            self._metrics.add("evicted", len(expired))
