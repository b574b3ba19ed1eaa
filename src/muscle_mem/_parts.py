"""The parts an engine is made of, built from its checked options and wired together."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from muscle_mem._outcome import Outcomes
from muscle_mem.cache._breaker import Breaker
from muscle_mem.cache._events import Journal
from muscle_mem.cache._store_writes import Writer
from muscle_mem.cache._trajectories import TrajectoryCache
from muscle_mem.cache.shadow_report import ShadowBook
from muscle_mem.embed import TaskMatcher, get_embedder
from muscle_mem.eviction.bounds import Bounds
from muscle_mem.eviction.policies import Policy, make_policy
from muscle_mem.eviction.relevance import TaskStream
from muscle_mem.metrics import Metrics
from muscle_mem.model import codec
from muscle_mem.model._task_keys import TaskIdentity
from muscle_mem.options import DEFAULT_POLICY, Options
from muscle_mem.record._task_templates import TemplateIndex
from muscle_mem.record.tools import ToolRegistry
from muscle_mem.replay._active_replays import ActiveReplays
from muscle_mem.replay._lookup import TaskLookup
from muscle_mem.stores import CoreStore, MemoryStore, open_store
from muscle_mem.stores.signing import signer_from

if TYPE_CHECKING:
    from muscle_mem.telemetry import Telemetry


class Parts:
    """An engine's parts: its store behind a breaker, the cache, the look-up, how calls end."""

    def __init__(self, store: CoreStore | str | None, options: Options) -> None:
        o = options
        codec.allow(o.types)
        self.policy: Policy = make_policy(o.policy or DEFAULT_POLICY, o.capacity)
        self.bounds = Bounds(capacity=o.capacity, max_bytes=o.max_bytes, ttl=o.ttl, policy=self.policy)
        semantic_policy = self.policy.name == "attention-lru" or getattr(self.policy, "semantic", 0.0) > 0.0
        embedder = (
            get_embedder(o.embedder) if o.embedder or semantic_policy or o.match == "semantic" else None
        )
        stream = TaskStream(embedder) if embedder is not None else None
        matcher = TaskMatcher(embedder, o.similarity) if embedder and o.match == "semantic" else None
        self.metrics = Metrics()
        signer = signer_from(
            o.signing_key, on_refused=functools.partial(self.metrics.add, "rejected_records")
        )
        # last: every option is valid (the keys too), nothing is left open; a server that is down is an
        # outage, not an error
        self.store: CoreStore = open_store(
            store, signer=signer, timeout=o.store_timeout, connect=False, read_only=o.mode == "frozen"
        )
        self.breaker = Breaker(self.store, self.metrics, timeout=o.store_timeout, retry=o.store_retry)
        if not isinstance(store, CoreStore):  # opened here: read it once, so a wrong URL fails now
            try:
                self.breaker.start()
            except BaseException:
                self.store.close()
                raise
        self.waits = not isinstance(self.store, MemoryStore)
        """Whether the store may wait (for a server, a lock): its calls then get a budget; memory never waits."""
        self.journal = Journal(self.store, breaker=self.breaker, behind=o.sync_interval > 0)
        self.active = ActiveReplays()
        self.cache = TrajectoryCache(
            self.store,
            self.policy,
            self.bounds,
            self.metrics,
            self.active.protected,
            self.breaker,
            stream=stream,
            matcher=matcher,
            namespace=o.namespace,
            index_size=o.index_size,
            decoded_size=o.decoded_size,
            sync_interval=o.sync_interval,
        )
        self.templates = (
            TemplateIndex(self.store, self.cache.count, o.namespace, max(o.sync_interval, 1.0))
            if o.templates and o.match == "exact"
            else None
        )
        self.look_up = TaskLookup(self.cache, self.metrics, self.templates)
        self.writer = Writer() if o.write_behind else None
        self.outcomes = Outcomes(self.cache, self.metrics, self.journal, self.writer, self.templates)
        if o.match == "tags":  # the task text does not decide: no miss is a forgotten param
            self.outcomes.near = None
        if o.telemetry is not False:
            self.outcomes.telemetry = _telemetry(o.telemetry)
        self.outcomes.frozen = o.mode == "frozen"
        self.book = ShadowBook(self.store, o.sync_interval) if o.mode == "proven" else None
        self.outcomes.book = self.book
        self.identify = TaskIdentity(o.match, namespace=o.namespace)
        self.registry = ToolRegistry()


def _telemetry(given: object) -> Telemetry:
    """The engine's OpenTelemetry reporter: ``True`` for the global providers, or the one given."""
    from muscle_mem.telemetry import Telemetry  # the otel extra, imported only when asked for

    if given is True:
        return Telemetry()
    if not isinstance(given, Telemetry):
        raise TypeError(f"telemetry must be a bool or a muscle_mem.telemetry.Telemetry, not {given!r}")
    return given
