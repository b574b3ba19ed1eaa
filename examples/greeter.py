"""The original muscle-mem README's example: a greeting tool whose cache is valid for one second.

Run: python examples/greeter.py
"""

import time
from dataclasses import dataclass

from muscle_mem import Check, Engine

engine = Engine()


@dataclass
class T:
    name: str
    time: float


def capture(name: str) -> T:
    return T(name=name, time=time.time())


def compare(current: T, candidate: T) -> bool:
    return current.time - candidate.time <= 1  # the cache is valid for one second


@engine.tool(pre_check=Check(capture, compare))
def hello(name: str) -> None:
    time.sleep(0.1)
    print(f"hello {name}")


def agent(name: str) -> None:
    for i in range(9):
        hello(name + " + " + str(i))


engine.set_agent(agent)

if __name__ == "__main__":
    assert not engine("erik")  # first run: a miss, the agent greets
    assert engine("erik")  # again: a hit, replayed without the agent
    assert not engine("john")  # another task: never the trajectory of "erik"
    time.sleep(3)
    result = engine("erik")  # three seconds later the check fails
    assert not result
    print("after 3 s:", result.reason)
