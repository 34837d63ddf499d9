"""Which first stage gets the facts to composition: for each answerable question of a QA file,
whether a passage holding every fact is among the candidates of each strategy (issue 16).

Run:  .venv/bin/python bench/qa_retrieval.py --home DIR [--file books] [--modes bm25,hybrid]

``--home`` holds the file's collection (``bench/qa.py --home DIR`` ingests it). Strategies, each
through ``Engine.search`` as the anonymous caller, over every split:

* ``concepts``: each concept (:func:`excerpt.compose.grounding.concepts`) with ``10 // n``
  passages, merged (what ``ask`` did before the question search);
* ``question@5``, ``@10``, ``@20``: the question without its framing words, alone;
  ``question as typed@10``: the question as it was asked;
* ``concepts+question`` (what ``ask`` does in BM25 mode): the concepts, then the question
  without its framing words with 10; ``concepts+question as typed`` (hybrid and semantic).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from excerpt.compose.ask import per_concept
from excerpt.compose.grounding import concepts, search_text
from excerpt.engine import Engine
from excerpt.evaluate.qa import Question, load_qa
from excerpt.evaluate.qa_metrics import missing_facts
from excerpt.types import Filters, Node, SearchMode

QA = Path(__file__).resolve().parent / "qa"
LIMIT = 10


def merged(lists: list[list[Node]]) -> list[Node]:
    seen: dict[str, Node] = {}
    for nodes in lists:
        for node in nodes:
            seen.setdefault(node.id, node)
    return list(seen.values())


def strategies(search: Callable[[str, int], list[Node]],
               question: str) -> dict[str, list[Node]]:
    found = concepts(question)
    by_concept = merged([search(c, per_concept(LIMIT, len(found))) for c in found])
    bare = search(search_text(question), 20)
    typed = search(question, 20)
    return {"concepts": by_concept, "question@5": bare[:5], "question@10": bare[:LIMIT],
            "question@20": bare, "question as typed@10": typed[:LIMIT],
            "concepts+question": merged([by_concept, bare[:LIMIT]]),
            "concepts+question as typed": merged([by_concept, typed[:LIMIT]])}


def holds(nodes: list[Node], q: Question) -> bool:
    return any(not missing_facts(n.text, q.facts) for n in nodes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--file", default="books")
    parser.add_argument("--modes", default="bm25,hybrid")
    args = parser.parse_args()
    qa = load_qa(QA / f"{args.file}.yaml")
    engine = Engine(args.home)
    if qa.collection not in engine.store.collections():
        print(f"{args.home} has no collection {qa.collection!r}: run bench/qa.py --home first",
              file=sys.stderr)
        return 2
    filters = Filters(qa.collection or args.file)
    answerable = [q for q in qa.questions if q.answerable]
    rows: dict[str, dict[str, float]] = {}
    for mode in args.modes.split(","):
        def search(query: str, k: int, mode: SearchMode = mode) -> list[Node]:
            return [h.node for h in engine.search(query, filters, None, mode, k).hits]

        hits: dict[str, int] = {}
        for q in answerable:
            for name, nodes in strategies(search, q.question).items():
                hits[name] = hits.get(name, 0) + holds(nodes, q)
        for name, count in hits.items():
            rows.setdefault(name, {})[mode] = count / len(answerable)
    modes = args.modes.split(",")
    print(f"{len(answerable)} answerable questions of {args.file}: share with a passage "
          f"holding every fact among the candidates\n")
    print("| first stage | " + " | ".join(modes) + " |")
    print("|---|" + "---|" * len(modes))
    for name, by_mode in rows.items():
        print(f"| {name} | " + " | ".join(f"{by_mode[m]:.2f}" for m in modes) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
