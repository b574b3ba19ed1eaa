"""muscle-mem 0.1.0's ``examples/greeter.py``: its calls and its assertions, on a clock the test moves.

The example greets a name nine times (0.1 s a greeting) with a pre-check that passes within one
second of its snapshot, then asks: john, erik (misses), erik three times (hits), erik after a 1 s
sleep (a miss), erik (a hit), john and jack (misses). The third hit comes 1.8 s after erik was
recorded: it passes because the hit before it renewed the window (0.1.0 stored each hit's run anew;
``Check(renew=True)``, the default, does so in this process). 0.1.0 itself fails the example at the
second call, replaying john's greetings for erik, and at the last two.
"""

from __future__ import annotations

from dataclasses import dataclass

from muscle_mem import Check, Engine

# (task, seconds slept before it, the hit the example asserts)
EXAMPLE = [
    ("john", 0.0, False),
    ("erik", 0.0, False),
    ("erik", 0.0, True),
    ("erik", 0.0, True),
    ("erik", 0.0, True),
    ("erik", 1.0, False),
    ("erik", 0.0, True),
    ("john", 0.0, False),
    ("jack", 0.0, False),
]


class Clock:
    """``time.time`` and ``time.sleep`` of a clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Snapshot:
    name: str
    time: float


def greeter(clock: Clock, *, renew: bool = True) -> tuple[Engine, list[str]]:
    """The example's engine, tool, check and agent (printing replaced by a list of greetings)."""
    engine = Engine()
    greeted: list[str] = []

    def capture(name: str) -> Snapshot:
        return Snapshot(name=name, time=clock.time())

    def compare(current: Snapshot, candidate: Snapshot) -> bool:
        return current.time - candidate.time <= 1  # pass if it happened within the last second

    @engine.function(pre_check=Check(capture, compare, renew=renew))
    def hello(name: str) -> None:
        clock.sleep(0.1)
        greeted.append(name)

    def agent(name: str) -> None:
        for i in range(9):
            hello(name + " + " + str(i))

    return engine.set_agent(agent).finalize(), greeted


def test_greeter_example_hits_and_misses_as_it_asserts() -> None:
    clock = Clock()
    engine, greeted = greeter(clock)
    for task, pause, expected in EXAMPLE:
        clock.sleep(pause)
        before = len(greeted)
        result = engine(task)
        assert bool(result) is expected, (task, result.reason)
        assert greeted[before:] == [f"{task} + {i}" for i in range(9)]  # never another task's greetings


def test_greeter_example_never_replays_another_name() -> None:
    clock = Clock()
    engine, greeted = greeter(clock)
    for task, pause, _ in EXAMPLE:
        clock.sleep(pause)
        engine(task)
    names = [g.split(" + ")[0] for g in greeted]
    assert names == [task for task, _, _ in EXAMPLE for _ in range(9)]


def test_without_renewal_the_third_erik_misses_1_8_s_after_the_recording() -> None:
    clock = Clock()
    engine, _ = greeter(clock, renew=False)
    hits = []
    for task, pause, _ in EXAMPLE[:4]:
        clock.sleep(pause)
        hits.append(bool(engine(task)))
    assert hits == [False, False, True, False]
