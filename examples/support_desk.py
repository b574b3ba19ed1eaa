"""A support agent with muscle memory, on a real SQLite CRM: a guided tour in eight requests.

The agent's "LLM" is scripted (no network, no API key) but takes a hosted model's time per call.
Its tools are methods of the CRM client, registered with ``engine.method`` and equality Checks on
what decides each step (the account's status, the refund limit, the ticket's status); see
``muscle_mem/demo/agent.py``. ``muscle-mem demo`` runs the same agent on a long stream.

    python examples/support_desk.py            # about 10 s
    python examples/support_desk.py --speed 10 # faster "LLM"
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from muscle_mem import Engine
from muscle_mem.demo.agent import SupportAgent, instrument
from muscle_mem.demo.desk import Desk
from muscle_mem.demo.llm import ScriptedLLM


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--speed", type=float, default=1.0, help="divide the LLM's latency by this")
    speed = parser.parse_args().speed

    engine = Engine()  # in memory; Engine("sqlite:///cache.db") would keep what it learns
    with tempfile.TemporaryDirectory() as tmp:
        Desk.create(Path(tmp) / "desk.db", seed=3).close()
        desk = instrument(engine)(Path(tmp) / "desk.db")  # the CRM client, its methods now tools
        llm = ScriptedLLM(speed=speed)
        engine.set_agent(SupportAgent(desk, llm)).set_context(desk)
        ada, bob, cy = [c for c in desk.customers() if c["status"] == "active" and c["plan"] == "Growth"][:3]

        def refund(customer: dict[str, str], amount: str, reason: str, why: str) -> None:
            calls = llm.usage.calls
            text = f"Refund ${amount} to {customer['email']}: {reason}"
            result = engine(
                text, tags=["refund"], params={"amount": amount, "email": customer["email"], "reason": reason}
            )
            kind = "HIT " if result.hit else ("PART" if result.steps_replayed else "MISS")
            print(f"{kind} {why}\n     {text}")
            print(f"     -> {result.output}")
            print(
                f"     {result.steps_replayed} steps replayed, {llm.usage.calls - calls} LLM calls, "
                f"{result.elapsed:.2f} s{'; ' + result.reason if result.reason else ''}\n"
            )

        refund(ada, "12.50", "the parcel arrived damaged", "a new task: the agent works, the engine records")
        refund(
            bob, "19.99", "I was charged twice", "same task, other customer and amount: replayed, ids flow"
        )
        desk.set_status(cy["id"], "suspended")
        refund(
            cy,
            "18.00",
            "the order never arrived",
            "the account was just suspended: the lookup shows it, the replay stops right after it",
        )
        desk.set_refund_limit("Growth", 2_000)
        refund(bob, "24.00", "the order never arrived", "finance lowered the limit below the amount")
        desk.set_refund_limit("Growth", 10_000)
        desk.flag_for_review(ada["id"])
        refund(
            ada,
            "9.90",
            "I was charged twice",
            "the processor now holds her refunds: only the post-check can see it",
        )
        refund(
            bob,
            "44.00",
            "the item is not as described",
            "above the Starter limit, which no run crossed: the agent decides once, the family learns",
        )
        refund(bob, "61.00", "I was charged twice", "back to normal: a full hit again")
        refund(ada, "7.25", "the parcel arrived damaged", "held again: the engine learned that branch too")
        desk.close()
    m = engine.metrics
    print(
        f"hits {m.hits}, misses {m.misses} ({m.partial_replays} partial), steps replayed {m.steps_replayed}"
    )


if __name__ == "__main__":
    main()
