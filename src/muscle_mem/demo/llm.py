"""The scripted stand-in for an LLM: the policy's decisions, at a model's latency and token cost.

Each call renders the prompt a tool-calling model would get (system prompt with the tool schemas,
the request, the transcript so far), counts its tokens, "generates" the decision with a realistic
number of completion tokens (a short chain of thought plus the call), and sleeps as long as a hosted
model would take to do that, divided by ``speed``.
"""

from __future__ import annotations

import inspect
import json
import math
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from muscle_mem.demo.desk import Desk
from muscle_mem.demo.policy import Action, Answer, Request, Transcript, decide

TOOLS = (
    "lookup_customer",
    "create_customer",
    "refund_policy",
    "get_ticket",
    "create_ticket",
    "add_note",
    "issue_refund",
    "escalate_ticket",
    "close_ticket",
    "change_plan",
)
"""The desk methods the agent may call."""

FIRST_TOKEN_SECONDS = 0.18
"""Time to first token of a hosted model (network and queueing included)."""
PREFILL_SECONDS_PER_TOKEN = 0.000_04
DECODE_SECONDS_PER_TOKEN = 0.006

_WORD = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """An estimate of a BPE tokenizer's count: one token per 4 letters of a word, one per symbol."""
    return sum(math.ceil(len(w) / 4) if w[0].isalnum() or w[0] == "_" else 1 for w in _WORD.findall(text))


def _tool_schema(name: str) -> dict[str, Any]:
    method = getattr(Desk, name)
    params = list(inspect.signature(method).parameters.values())[1:]
    return {
        "name": name,
        "description": inspect.getdoc(method),
        "parameters": {p.name: {"type": "string", "required": p.default is p.empty} for p in params},
    }


SYSTEM_PROMPT = (
    "You are the support agent of an online shop. Resolve the customer's request with the tools "
    "below, one call at a time. Follow policy: never refund a suspended account (escalate it to "
    "trust-and-safety); refunds above the plan's limit go to billing; every money request gets a "
    "ticket; note what you did on the ticket, and close it when done. Think step by step, then answer "
    "with one tool call as JSON, or with the final answer as JSON.\n\nTools:\n"
    + json.dumps([_tool_schema(name) for name in TOOLS], indent=2)
)
_REASONING = (
    "The customer asked for this; I have checked the account and the policy, the next step follows "
    "from what the last tool returned, and nothing in the transcript contradicts it, so I will do it now."
)


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """What an LLM has cost so far."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.seconds + other.seconds,
        )

    def __sub__(self, other: LLMUsage) -> LLMUsage:
        return LLMUsage(
            self.calls - other.calls,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
            self.seconds - other.seconds,
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """What one LLM call decided, and what it cost."""

    action: Action
    usage: LLMUsage


class ScriptedLLM:
    """Decides like :func:`policy.decide`, costs like a hosted model (its sleep divided by ``speed``)."""

    def __init__(
        self, *, speed: float = 1.0, seed: int = 0, sleep: Callable[[float], None] = time.sleep
    ) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed!r}")
        self.speed = speed
        self._rng = random.Random(seed)
        self._sleep = sleep
        self._lock = threading.Lock()
        self.usage = LLMUsage()
        """What this LLM has cost so far (replaced, never mutated: safe to read from any thread)."""

    def decide(self, request_text: str, transcript: Transcript) -> Decision:
        """The next action and what it cost, after "thinking" for as long as a model would."""
        start = time.perf_counter()
        action = decide(Request.parse(request_text), transcript)
        prompt = self.prompt(request_text, transcript)
        prompt_tokens = count_tokens(prompt)
        with self._lock:
            thought = self._rng.randint(12, len(_REASONING.split()))
            jitter = self._rng.uniform(0.8, 1.25)
        completion_tokens = count_tokens(" ".join(_REASONING.split()[:thought]) + render_action(action))
        latency = jitter * (
            FIRST_TOKEN_SECONDS
            + PREFILL_SECONDS_PER_TOKEN * prompt_tokens
            + DECODE_SECONDS_PER_TOKEN * completion_tokens
        )
        self._sleep(latency / self.speed)
        cost = LLMUsage(1, prompt_tokens, completion_tokens, time.perf_counter() - start)
        with self._lock:
            self.usage = self.usage + cost
        return Decision(action, cost)

    @staticmethod
    def prompt(request_text: str, transcript: Transcript) -> str:
        """The full prompt of one call."""
        lines = [SYSTEM_PROMPT, "", f"Customer request: {request_text}"]
        for call in transcript.calls:
            lines.append(f"Call: {json.dumps({'tool': call.tool, 'args': list(call.args)})}")
            lines.append(f"Result: {json.dumps(call.output, default=str)}")
        return "\n".join(lines)


def render_action(action: Action) -> str:
    """An action as the JSON a model would emit."""
    if isinstance(action, Answer):
        return json.dumps({"answer": action.value})
    return json.dumps({"tool": action.tool, "args": list(action.args)})
