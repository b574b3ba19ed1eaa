"""Templates of task texts, learned from the agent's own runs and proven before they serve a new text.

After the agent solved a task given as plain text, the tokens of the text that data flow binds in
its trajectory (a number passed to a tool, a name written into a message) are the *slots* of a
candidate template; the other tokens stay fixed text. The run is stored once more under the
template's key, with the slots as params (``refund order {1}``, ``{1}`` = 4471).

A template serves a new text only once the agent solved at least two tasks of it with different
slot values and made the same *family* of calls (the same tools, the same bindings, each slot
flowing the same way), and then only for values its runs showed: a number slot within the closed
range its runs saw, any other slot within its look (the token's kind, part of the template) if its
runs saw two values or more, else only that value. A template replay is then a params replay: the
observations of every step are still compared.

A template is found by the text's shape (its tokens replaced by their kinds) and the slot positions
used under that shape, both read from the store's task keys: a dict lookup per set of slot positions,
whatever the number of templates.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model._task_keys import namespace_prefix
from muscle_mem.model._text_slots import Reading, Template, read
from muscle_mem.model._whole_words import whole_word
from muscle_mem.model.provenance import Arg, Guarded, Param, children, nested
from muscle_mem.model.trajectory import Trajectory, arg_record
from muscle_mem.record._dataflow import build_trajectory, kept_secret
from muscle_mem.record._origins import COMMON_WORDS
from muscle_mem.record._run import Run
from muscle_mem.record._task import plain_task
from muscle_mem.stores import CoreStore

logger = logging.getLogger(__name__)

MARK = "template:"
"""What a template's task key holds after its namespace prefix."""
MAX_SLOTS = 6
"""A template has at most this many slots."""
PROOF_RUNS = 2
"""Runs of one family with different slot values a template needs before it serves a new text."""
_RUN_MARK = "-template"
_WORD_KINDS = frozenset({"word", "Name", "WORD", "Mixed"})
_ARG_DEPTH = 4


def template_key(reading: Reading, slots: Sequence[int], tags: Iterable[str], prefix: str) -> str:
    """The key a template's runs are stored under: its namespace ``prefix`` (see
    :func:`~muscle_mem.model._task_keys.namespace_prefix`), its shape and slot positions, then its digest."""
    positions = ",".join(map(str, slots))
    body = codec.digest([reading.parts(slots), sorted(set(tags))])
    return f"{prefix}{MARK}{reading.shape}:{positions}:{body}"


def template_run_id(trajectory_id: str) -> str:
    """The id of a run's copy under its template: the id of the run under its text, marked.

    Derived, not drawn, so that whatever removes a run (``muscle-mem rm``, a tool called after the
    run ended) removes its template copy with it: see :func:`with_template_runs`.
    """
    return f"{trajectory_id}{_RUN_MARK}"


def with_template_runs(trajectory_ids: Iterable[str]) -> list[str]:
    """The ids, each followed by the id of its template copy (a run's copy is not copied again)."""
    out = []
    for trajectory_id in trajectory_ids:
        out.append(trajectory_id)
        if not trajectory_id.endswith(_RUN_MARK):
            out.append(template_run_id(trajectory_id))
    return out


def key_prefix(key: str) -> str | None:
    """The namespace prefix of a template key, or None if ``key`` is not a template key."""
    at = key.find(MARK)
    if at < 0:
        return None
    prefix = key[:at]
    return prefix if not prefix or (prefix.startswith("ns:") and prefix.endswith("/")) else None


def key_slots(key: str) -> tuple[str, tuple[int, ...]] | None:
    """The shape and slot positions a template key names, or None if it is not a template key."""
    prefix = key_prefix(key)
    if prefix is None:
        return None
    shape, _, rest = key[len(prefix) + len(MARK) :].partition(":")
    positions, _, _ = rest.partition(":")
    try:
        slots = tuple(int(p) for p in positions.split(","))
    except ValueError:
        return None
    return (shape, slots) if shape and slots else None


@dataclass(frozen=True, slots=True)
class Family:
    """The runs of a template that made the same calls: the slot values each run had."""

    signature: str
    runs: tuple[tuple[Any, ...], ...]
    shown: tuple[tuple[Any, Any, int], ...]
    """Per slot, what the runs showed: the least and the greatest value, and how many values."""

    @classmethod
    def of(cls, signature: str, runs: Sequence[tuple[Any, ...]]) -> Family:
        """A family of these runs, with what they showed per slot worked out once."""
        by_slot = list(zip(*runs, strict=True))
        shown = tuple((min(seen), max(seen), len(set(seen))) for seen in by_slot)
        return cls(signature, tuple(runs), shown)

    @property
    def proven(self) -> bool:
        """Whether at least :data:`PROOF_RUNS` of its runs had different slot values."""
        return len(set(self.runs)) >= PROOF_RUNS

    def covers(self, values: Sequence[Any], numeric: Sequence[bool]) -> bool:
        """Whether every value lies within what the family's runs showed for its slot."""
        for value, is_number, (least, greatest, count) in zip(values, numeric, self.shown, strict=True):
            if is_number:
                if not least <= value <= greatest:
                    return False
            elif count < 2 and value != least:
                return False
        return True

    def ranges(self, numeric: Sequence[bool]) -> list[str]:
        """What each slot takes, in words: ``1000..1049``, ``any of its look``, ``'Paris' only``."""
        out = []
        for is_number, (least, greatest, count) in zip(numeric, self.shown, strict=True):
            if count == 1:
                out.append(f"{least!r} only")
            elif is_number:
                out.append(f"{least}..{greatest}")
            else:
                out.append(f"any of its look ({count} seen)")
        return out


@dataclass(frozen=True, slots=True)
class Proof:
    """What a template's stored runs showed: its families, most runs first."""

    text: str
    families: tuple[Family, ...]
    numeric: tuple[bool, ...]

    @property
    def live(self) -> bool:
        return any(f.proven for f in self.families)

    def covers(self, values: Sequence[Any]) -> bool:
        """Whether a proven family's runs showed these slot values."""
        return any(f.proven and f.covers(values, self.numeric) for f in self.families)


RunSeen = tuple[str, tuple[Any, ...], str, tuple[bool, ...]]
"""What one stored run of a template showed: its family signature, its slot values, the template's
text and which slots are numbers."""


def run_seen(key: str, trajectory: Trajectory) -> RunSeen | None:
    """What a trajectory stored under a template key showed, or None if it is not a run of it."""
    named, prefix = key_slots(key), key_prefix(key)
    if named is None or prefix is None:
        return None
    shape, slots = named
    reading = read(trajectory.task)
    if reading is None or reading.shape != shape or max(slots) >= len(reading.tokens):
        return None
    if template_key(reading, slots, trajectory.tags, prefix) != key:
        return None  # a text that is not of this template: its values prove nothing
    template = Template(reading, slots, key)
    numeric = tuple(reading.tokens[i].numeric for i in slots)
    return family_signature(trajectory), tuple(template.params.values()), template.text, numeric


def proof_from(runs: Iterable[RunSeen]) -> Proof | None:
    """What the runs of a template prove, or None if there is none."""
    by_family: dict[str, list[tuple[Any, ...]]] = {}
    last: RunSeen | None = None
    for last in runs:
        by_family.setdefault(last[0], []).append(last[1])
    if last is None:
        return None
    text, numeric = last[2], last[3]
    families = sorted((Family.of(sig, runs) for sig, runs in by_family.items()), key=lambda f: -len(f.runs))
    return Proof(text, tuple(families), numeric)


def proof_of(key: str, trajectories: Iterable[Trajectory]) -> Proof | None:
    """What the trajectories stored under a template key prove, or None if none is its own."""
    return proof_from(seen for t in trajectories if (seen := run_seen(key, t)) is not None)


def stored_proofs(store: CoreStore) -> Iterator[tuple[str, Proof]]:
    """Every template in a store, by key, with what its runs prove."""
    for key in sorted(store.tasks()):
        if key_slots(key) is not None:
            proof = proof_of(key, store.changes(key, 0).added)
            if proof is not None:
                yield key, proof


def family_signature(trajectory: Trajectory) -> str:
    """What runs of one family share: their calls, each argument bound alike, and their answer's binding."""
    return codec.digest([[s.signature for s in trajectory.steps], arg_record(trajectory.result)])


@dataclass(frozen=True, slots=True)
class _Proven:
    """A template's runs as last read: how many, up to which revision of its key, and what they prove."""

    count: int
    revision: int
    runs: dict[str, RunSeen]
    proof: Proof | None


class TemplateIndex:
    """The templates of one engine's store: found for a new text, proven from their stored runs."""

    def __init__(
        self,
        store: CoreStore,
        count: Callable[[str], int],
        namespace: str | None = None,
        refresh_interval: float = 1.0,
    ) -> None:
        self.store = store
        self._count = count
        """``count(key)``: how many trajectories the engine's index holds for a key (read as lookups read)."""
        self.prefix = namespace_prefix(namespace)
        self._refresh_interval = refresh_interval
        self._slots: dict[str, frozenset[tuple[int, ...]]] | None = None
        """Per shape, the slot positions its templates use (None: not read from the store yet)."""
        self._revision = -1
        self._refreshed = 0.0
        self._proofs: dict[str, _Proven] = {}
        self._lock = threading.Lock()

    def find(self, text: str, tags: Sequence[str]) -> Template | None:
        """The live template whose runs showed this text's slot values, or None."""
        reading = read(text)
        if reading is None:
            return None
        found = self._find(reading, tags)
        if found is None and self._refresh_due():
            self._load()
            found = self._find(reading, tags)
        return found

    def family_of(self, run: Run) -> Template | None:
        """The template a plain-text run served by its own key also follows (one task under two keys), or None.

        None too for a run served by a template, or when the templates cannot be read (logged).
        """
        if run.template is not None or run.text is None:
            return None
        try:
            template = self.find(run.text, run.tags)
        except Exception:  # the templates could not be read: the run's own family decides
            logger.exception("could not read the templates of task %r", run.task)
            return None
        return template if template is not None and template.key != run.task_key else None

    def _find(self, reading: Reading, tags: Sequence[str]) -> Template | None:
        if self._slots is None:
            self._load()
        assert self._slots is not None
        for slots in sorted(self._slots.get(reading.shape, ()), key=lambda s: (len(s), s)):
            if max(slots) >= len(reading.tokens):
                continue
            key = template_key(reading, slots, tags, self.prefix)
            proof = self.proof(key)
            template = Template(reading, slots, key)
            if proof is not None and proof.covers(list(template.params.values())):
                return template
        return None

    def proof(self, key: str) -> Proof | None:
        """What the runs stored under a template key prove (the runs added or removed since read
        again when their number changes)."""
        count = self._count(key)
        if not count:
            return None
        with self._lock:
            known = self._proofs.get(key)
        if known is not None and known.count == count:
            return known.proof
        changes = self.store.changes(key, known.revision if known is not None else 0)
        runs = {} if known is None or changes.reset else dict(known.runs)
        for removed in changes.removed:
            runs.pop(removed, None)
        for trajectory in changes.added:
            seen = run_seen(key, trajectory)
            if seen is not None:
                runs[trajectory.id] = seen
        read_now = _Proven(count, changes.revision, runs, proof_from(runs.values()))
        with self._lock:
            self._proofs[key] = read_now
        return read_now.proof

    def note(self, template: Template) -> None:
        """A template this process stored a run of: found from now on (others' at the next refresh)."""
        if self._slots is None:
            return
        with self._lock:  # a new set, never one a lookup may be reading
            shape = template.reading.shape
            self._slots[shape] = self._slots.get(shape, frozenset()) | {template.slots}

    def _refresh_due(self) -> bool:
        now = time.monotonic()
        if now - self._refreshed < self._refresh_interval:
            return False
        self._refreshed = now
        return self.store.revision() != self._revision

    def _load(self) -> None:
        """Read which slot positions each shape's templates use from the store's task keys."""
        revision = self.store.revision()
        slots: dict[str, set[tuple[int, ...]]] = {}
        for key in self.store.tasks():
            named = key_slots(key)
            if named is not None and key_prefix(key) == self.prefix:
                slots.setdefault(named[0], set()).add(named[1])
        with self._lock:
            self._slots = {shape: frozenset(used) for shape, used in slots.items()}
            self._revision = revision
            self._refreshed = time.monotonic()


def induce(
    run: Run, text: str, output: Any, seconds: float, prefix: str = "", stored_id: str | None = None
) -> tuple[Template, Trajectory] | None:
    """The template a finished run of a plain-text task proposes, with its trajectory under it.

    ``prefix``: the namespace prefix of the engine's keys (:func:`~muscle_mem.model._task_keys.namespace_prefix`);
    ``stored_id``: the id the run is stored under its text with (its copy's id is derived from it).

    The slots are the tokens of ``text`` that the trajectory binds (words only where a tool
    argument holds them); None if none is bound, if a slot's value is used in a way a replay
    could not rebuild, or if a step was replayed from the text's own trajectory (whose arguments
    are its constants).
    """
    reading = read(text)
    if reading is None or any(call.replayed for call in run.calls):
        return None
    candidates = _candidates(reading, run)
    if not candidates:
        return None
    names = [f"t{i}" for i in candidates]
    trial = _as_template(
        run,
        reading.rendered(candidates, names),
        "",
        dict(zip(names, _values(reading, candidates), strict=True)),
    )
    try:
        first = build_trajectory(trial, output, seconds)
    except codec.CodecError:
        return None
    used, guarded = _params_used(first)
    if used & guarded:
        return None
    slots = tuple(i for i, name in zip(candidates, names, strict=True) if name in used)
    if not slots or len(slots) > MAX_SLOTS:
        return None
    key = template_key(reading, slots, run.tags, prefix)
    template = Template(reading, slots, key)
    view = _as_template(run, template.text, key, template.params)
    try:
        trajectory = build_trajectory(view, output, seconds)
    except codec.CodecError:
        return None
    if kept_secret(view, trajectory) is not None:
        return None
    if stored_id is not None:
        trajectory = dataclasses.replace(trajectory, id=template_run_id(stored_id))
    return template, stored_form(trajectory, text)


def stored_form(trajectory: Trajectory, text: str) -> Trajectory:
    """A template run's trajectory as stored: with the text it solved, whose tokens are its slot values."""
    return dataclasses.replace(trajectory, task=text)


def _values(reading: Reading, positions: Sequence[int]) -> list[Any]:
    return [reading.tokens[i].value for i in positions]


def _candidates(reading: Reading, run: Run) -> list[int]:
    """The tokens that may be slots: every value-like token, and words a tool argument holds."""
    argument_texts: list[str] | None = None
    out = []
    for i, token in enumerate(reading.tokens):
        if token.kind in _WORD_KINDS:
            if token.text.lower() in COMMON_WORDS or len(token.text) < 3:
                continue
            if argument_texts is None:
                argument_texts = list(_argument_texts(run))
            pattern = whole_word(token.text)
            if not any(pattern.search(t) for t in argument_texts):
                continue
        out.append(i)
    return out


def _argument_texts(run: Run) -> Iterator[str]:
    """The texts inside the arguments of the run's calls (a few levels deep)."""

    def walk(value: Any, depth: int) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif depth < _ARG_DEPTH:
            for _, child in children(value):
                yield from walk(child, depth + 1)

    for call in run.calls:
        for value in (*call.args, *call.kwargs.values()):
            yield from walk(value, 0)


def _as_template(run: Run, text: str, key: str, params: Mapping[str, Any]) -> Run:
    """The run as if its slot values had been given as params of a task with the template's text."""
    view = Run(run.owner, plain_task(key, text, run.tags, params))
    view.calls = run.calls
    view.tokens = run.tokens
    view.secret_outputs = run.secret_outputs
    view.problems = list(run.problems)
    return view


def _params_used(trajectory: Trajectory) -> tuple[set[str], set[str]]:
    """The params a trajectory binds anywhere, and those it binds only by their recorded value."""
    used: set[str] = set()
    guarded: set[str] = set()

    def visit(arg: Arg) -> None:
        if isinstance(arg, Param):
            used.add(arg.name)
        elif isinstance(arg, Guarded):
            guarded.update(name for name, _ in arg.params)
        for inner in nested(arg):
            visit(inner)

    for step in trajectory.steps:
        for arg in step.arguments:
            visit(arg)
    visit(trajectory.result)
    return used, guarded
