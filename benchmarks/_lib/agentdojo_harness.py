"""AgentDojo suites as muscle-mem tools, an oracle agent that runs each task's ground truth, and the judge.

Mapping of AgentDojo to muscle-mem (one ``Engine`` per suite):

* **Tools.** Each AgentDojo ``Function`` becomes one engine tool of the same name, called with keyword
  arguments only. The tool reads the environment from an :class:`EnvHolder` (a closure, so a replay
  acts on the environment of the current run), extracts the function's ``Depends`` fields from it,
  validates the arguments with the function's own schema and runs it. An exception becomes the text
  ``"ErrorType: message"``, as AgentDojo's ``FunctionsRuntime`` returns it to an agent.
* **Checks.** Every tool has one ``Check.equal`` pre-check: what the call would return *now*, with the
  same arguments, on a deep copy of the environment fields it depends on (JSON-like, via
  ``model_dump``). For a read tool that is what the read returns; for a write tool it is the write's own
  result (a new event or e-mail with its id, a confirmation text), computed on a copy so nothing is
  written twice. No tool captures more than the fields its ``Depends`` names. ``--checks reads``
  leaves the writes (:data:`WRITES`) unchecked, ``--checks none`` every tool.
* **Params.** The ground-truth argument values that the prompt spells out whole (names, IBANs,
  dates, amounts; strings of 3 characters or more) are the task's params ``p0``, ``p1``... (80 of the 97
  tasks have some); the task text is the prompt. ``--no-params`` runs without them: the figures are
  the same, since every run uses the prompt it was recorded with.
* **Oracle.** :class:`Oracle` is the agent: it runs ``ground_truth(environment)`` through the tools and
  returns the last call's output; :func:`run_alone` runs the same calls without the engine, to judge.
* **Clock.** The e-mail and cloud-drive clients stamp new items with ``datetime.now()``; both are pinned
  to one instant (:func:`freeze_clock`) so two runs on equal environments end in equal environments.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from muscle_mem import Check, Engine, current_run

BENCHMARK_VERSION = "v1.2.2"
FROZEN_NOW = datetime.datetime(2024, 5, 15, 12, 0, 0)

Tools = dict[str, Callable[..., Any]]


def load_suites(wanted: str = BENCHMARK_VERSION) -> tuple[str, dict[str, Any]]:
    """The AgentDojo suites of benchmark version ``wanted`` if the package has it, else of its newest."""
    from agentdojo.task_suite import load_suites as loader

    versions = [v for v, suites in loader._SUITES.items() if suites]
    version = wanted if wanted in versions else max(versions, key=_version_key)
    return version, dict(loader.get_suites(version))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.lstrip("v").split("."))


def freeze_clock() -> None:
    """Pin ``datetime.now()`` in the AgentDojo clients that stamp new e-mails and files."""
    from agentdojo.default_suites.v1.tools import cloud_drive_client, email_client

    class _Clock(datetime.datetime):
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> datetime.datetime:  # type: ignore[override]
            return FROZEN_NOW

    pinned = types.SimpleNamespace(
        **{k: getattr(datetime, k) for k in dir(datetime) if not k.startswith("__")}
    )
    pinned.datetime = _Clock
    for module in (cloud_drive_client, email_client):
        module.datetime = pinned  # type: ignore[attr-defined]


def plain(value: Any) -> Any:
    """A JSON-like copy of a tool's output or an environment (pydantic models dumped)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return value


def freeze(value: Any) -> Any:
    """A hashable form of :func:`plain` output, for ``Check.equal`` snapshots."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


@dataclass
class EnvHolder:
    """The environment the tools act on (the current run's) and the calls made on it, in order."""

    env: Any = None
    log: list[Planned] = field(default_factory=list)


def invoke(function: Any, env: Any, kwargs: Mapping[str, Any]) -> Any:
    """Run an AgentDojo function on ``env`` as its runtime does, an error becoming its text."""
    try:
        args = function.parameters.model_validate(dict(kwargs)).model_dump()
        deps = {name: dep.extract_dep_from_env(env) for name, dep in function.dependencies.items()}
        return function.run(**args, **deps)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _dry_run(function: Any, env: Any, kwargs: Mapping[str, Any]) -> Any:
    """What the call would return now, on a copy of the environment fields it depends on."""
    shadow = env.model_copy()
    for dep in function.dependencies.values():
        name = dep.env_dependency
        setattr(shadow, name, copy.deepcopy(getattr(env, name)))
    return freeze(plain(invoke(function, shadow, kwargs)))


def _fingerprint(function: Any) -> str:
    try:
        text = inspect.getsource(function.run)
    except (OSError, TypeError):
        text = function.name
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


WRITES = re.compile(
    r"^(send|delete|create|cancel|reschedule|add|append|share|update|schedule|reserve|invite|remove|post)_"
)
"""Names of the tools that change the environment (``get_unread_emails`` marks e-mails read, but is a read)."""

CHECKS = ("all", "reads", "none")


def register_tools(engine: Engine, suite: Any, holder: EnvHolder, *, checks: str = "all") -> Tools:
    """Register every tool of ``suite`` on ``engine``; returns the instrumented callables by name.

    ``checks`` says which tools get their pre-check: ``all``, ``reads`` (writes unchecked, so the
    arguments of writes rest on the engine's data flow alone) or ``none`` (a control that shows the
    judge at work: replays then go wrong).
    """
    tools: Tools = {}
    for function in suite.tools:

        def call(_f: Any = function, **kwargs: Any) -> Any:
            holder.log.append(planned(_f.name, kwargs))
            return invoke(_f, holder.env, kwargs)

        def capture(_f: Any = function, **kwargs: Any) -> Any:
            return _dry_run(_f, holder.env, kwargs)

        tools[function.name] = engine.register(
            call,
            name=function.name,
            version=_fingerprint(function),
            pre_check=Check.equal(capture) if _checked(function.name, checks) else None,
        )
    return tools


def _checked(name: str, checks: str) -> bool:
    if checks not in CHECKS:
        raise ValueError(f"checks must be one of {CHECKS}, not {checks!r}")
    return checks == "all" or (checks == "reads" and WRITES.match(name) is None)


# the oracle agent


@dataclass(frozen=True)
class Planned:
    """One ground-truth call: a function name and its arguments."""

    function: str
    args: tuple[tuple[str, Any], ...]


def plan(task: Any, env: Any) -> list[Planned]:
    """The calls of ``task.ground_truth`` on (a copy of) ``env``."""
    return [planned(c.function, c.args) for c in task.ground_truth(env.model_copy(deep=True))]


def planned(function: str, kwargs: Mapping[str, Any]) -> Planned:
    """A call as a hashable :class:`Planned` (lists and dicts made tuples)."""
    return Planned(function, tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


def _as_args(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_as_args(v) for v in value]
    return value


@dataclass
class Oracle:
    """The oracle agent: runs the current task's ground truth through the instrumented tools.

    After a partial replay it resumes: when the replayed steps are the first ground-truth calls (same
    functions, same arguments, in order) it makes the rest; otherwise it makes them all, on top of the
    replayed steps that went astray (which the judge then sees). Its answer is the last call's output.
    """

    tools: Tools
    calls: list[Planned] = field(default_factory=list)

    def __call__(self, task_text: str) -> Any:
        run = current_run()
        done = [planned(c.tool, c.kwargs) for c in run.steps] if run else []
        start = len(done) if self.calls[: len(done)] == done else 0
        output = run.steps[-1].output if run and run.steps and start else None
        for call in self.calls[start:]:
            output = self.tools[call.function](**{k: _as_args(v) for k, v in call.args})
        return output


def run_alone(suite: Any, calls: Sequence[Planned], env: Any) -> list[Any]:
    """The oracle without the engine: each call on ``env`` directly; returns their outputs."""
    functions = {f.name: f for f in suite.tools}
    return [invoke(functions[c.function], env, {k: _as_args(v) for k, v in c.args}) for c in calls]


def params_for(prompt: str, calls: Sequence[Planned]) -> dict[str, Any]:
    """Task params: the ground-truth argument values (strings of 3+ characters, numbers) that the
    prompt spells out verbatim, named ``p0``, ``p1``... in order of first use."""
    found: dict[str, Any] = {}
    seen: set[str] = set()
    for call in calls:
        for _, value in call.args:
            for leaf in value if isinstance(value, tuple) else (value,):
                if isinstance(leaf, bool) or not isinstance(leaf, str | int | float):
                    continue
                text = str(leaf)
                if text in seen or (isinstance(leaf, str) and len(text) < 3) or not _spelled(text, prompt):
                    continue
                seen.add(text)
                found[f"p{len(found)}"] = leaf
    return found


def _spelled(text: str, prompt: str) -> bool:
    """Whether ``text`` stands in ``prompt`` as a whole (not inside a longer word or number)."""
    return re.search(rf"(?<![\w.]){re.escape(text)}(?![\w]|\.\d)", prompt) is not None
