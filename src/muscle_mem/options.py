"""The options of an :class:`~muscle_mem.Engine`: what each means, and its check."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from muscle_mem.cache._breaker import check_seconds
from muscle_mem.model._spend import Prices, check_prices
from muscle_mem.model._task_keys import Match, check_matching
from muscle_mem.modes import DEFAULT_PROOF, Mode, check_mode
from muscle_mem.replay._decoded_trajectories import DECODED_SIZE
from muscle_mem.replay._stored_step_index import INDEX_SIZE
from muscle_mem.stores.signing import Keys

if TYPE_CHECKING:
    from muscle_mem.embed import Embedder
    from muscle_mem.eviction.policies import Policy
    from muscle_mem.telemetry import Telemetry

SYNC_INTERVAL = 0.5
"""Default seconds an engine may lag the store (use statistics written behind, changes polled)."""
DEFAULT_POLICY = "adaptive"
"""The policy that measured best (docs/policies.md): decayed utility adapted to the traffic, O(log n) eviction."""


@dataclass(frozen=True)
class Options:
    """An engine's options, each checked when the engine is made (TypeError or ValueError saying which).

    ``match`` (``"exact"``, ``"tags"`` or ``"semantic"``) and ``similarity``: which stored task a call's
    task is (see docs/guide.md). ``capacity``, ``max_bytes``, ``ttl`` and ``policy`` bound the store
    (see docs/policies.md). ``namespace`` keeps engines sharing one store apart.
    ``signing_key`` (else ``$MUSCLE_MEM_SIGNING_KEY``): the key, or keys (the first signs, all verify),
    of the HMAC every stored record carries; a record not signed with one of them is never replayed.
    The store is optional to the agent: while it is unavailable, calls are served by the agent,
    uncached. ``store_timeout``: the most seconds one call waits for its store, in total;
    ``store_retry``: the fewest seconds between two probes of a store that is down.
    ``index_size`` (default 100,000) bounds the step index edges kept in the process and
    ``decoded_size`` (default 1,000) the decoded trajectories: a store with a step index (the three of
    this package) is read node by node as replays reach it, so memory does not grow with history.
    ``types``: dataclasses, pydantic models, enums and named tuples whose stored instances may be
    rebuilt before this process has recorded one (decoding never runs their code; see
    :func:`muscle_mem.model.codec.allow`). Any other class in a stored value stays opaque, so a step
    passing it is not replayed.
    ``write_behind=True`` takes a miss's store write off the caller's path: the trajectory is built
    and checked as the call ends, then written by a background thread, in order; the result says
    ``storing`` (not ``stored``), and ``Engine.flush`` waits for the writes (a process that dies first
    loses those still queued; the store holds each trajectory whole or not at all).
    ``sync_interval`` (seconds, default 0.5): how far behind the store this process may be. A hit's
    use statistics are written in batches, at most once per trajectory per interval, by a background
    thread (and by ``Engine.flush``, ``Engine.close`` and at interpreter exit; a crash loses the last
    interval's, never a trajectory, which a miss writes at once unless ``write_behind``), and so are
    events. A hit reads nothing from the store while its task has not changed: PostgreSQL notifies
    changes, SQLite's ``data_version`` shows them; where that cannot be told (no listener), a task's
    state is read at most once per interval. 0 writes every hit through and reads the store's revision on every call.
    ``observations`` (default ``"compared"``): after each replayed step, its output is compared with
    what the agent's own runs of that step saw, and the replay goes on only as far as they show the
    agent would (see the README, "How a replay stays sound"); ``"ignored"`` leaves that to the checks
    alone, as before 0.3.0 (for measuring what the comparison costs and saves; not for production).
    ``prices``: per model name, what a million input and a million output tokens cost
    (``{"gpt-4.1": (2.0, 8.0)}``), for ``Engine.ledger``; there is no built-in price list.
    ``telemetry=True`` reports each call to OpenTelemetry (spans and metrics, through the API of the
    ``otel`` extra; the application's SDK decides where they go), or pass a
    :class:`muscle_mem.telemetry.Telemetry` made with other providers.
    ``mode`` (see docs/modes.md): ``"replay"`` (the default) replays what is safe and stores the
    agent's runs; ``"shadow"`` always runs the agent, stores its runs, and compares each with what a
    replay would have done (``Result.shadow``, ``Engine.shadow_report``); ``"proven"`` replays a task
    family once ``proof`` (default 3) shadow runs agreed with no disagreement since, and shadows it
    until then; ``"frozen"`` replays what is stored and writes nothing (a SQLite URL is opened read
    only).
    ``templates=True``: a task given as one plain text and nothing else may be served by a template
    learned from the agent's own runs (``refund order {1}``), once two runs with different values
    proved it, and only for values its runs showed (see docs/templates.md). Each such run is then
    stored twice: under its text, and under the template its data flow proposes.
    """

    match: Match = "exact"
    similarity: float = 0.9
    capacity: int | None = None
    max_bytes: int | None = None
    policy: str | Policy | None = None
    ttl: float | None = None
    embedder: str | Embedder | None = None
    namespace: str | None = None
    signing_key: Keys | None = None
    store_timeout: float = 5.0
    store_retry: float = 2.0
    index_size: int = INDEX_SIZE
    decoded_size: int = DECODED_SIZE
    types: Iterable[type] = ()
    write_behind: bool = False
    sync_interval: float = SYNC_INTERVAL
    observations: Literal["compared", "ignored"] = "compared"
    prices: Prices | None = None
    telemetry: bool | Telemetry = False
    mode: Mode = "replay"
    proof: int = DEFAULT_PROOF
    templates: bool = False
    price_list: dict[str, tuple[float, float]] = field(init=False)
    """``prices`` checked: per model name, floats per million input and output tokens."""

    def __post_init__(self) -> None:
        check_mode(self.mode, self.proof)
        if self.mode == "frozen" and self.ttl is not None:
            raise ValueError(
                "mode='frozen' writes nothing, so it cannot expire trajectories: leave ttl unset"
            )
        check_matching(self.match, self.similarity, self.namespace)
        object.__setattr__(self, "price_list", check_prices(self.prices))
        interval = self.sync_interval
        if isinstance(interval, bool) or not (isinstance(interval, int | float) and 0 <= interval < math.inf):
            raise ValueError(f"sync_interval must be a finite number of seconds >= 0, got {interval!r}")
        for name, size in (("index_size", self.index_size), ("decoded_size", self.decoded_size)):
            if type(size) is not int or size < 1:
                raise ValueError(f"{name} must be a positive int, not {size!r}")
        if self.observations not in ("compared", "ignored"):
            raise ValueError(f"observations must be 'compared' or 'ignored', not {self.observations!r}")
        check_seconds("store_timeout", self.store_timeout)
        check_seconds("store_retry", self.store_retry)
        for name in ("templates", "write_behind"):
            if type(getattr(self, name)) is not bool:
                raise TypeError(f"{name} must be a bool, not {getattr(self, name)!r}")
