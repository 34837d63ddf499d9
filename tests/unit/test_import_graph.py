"""excerpt's modules import one another without a cycle, file by file and package by package
(every import counts: at the top, inside a function, or for type checking only), so each
layer can be read, tested and replaced from the bottom up."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import excerpt

ROOT = Path(excerpt.__file__).parent


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(name: str, path: Path) -> Iterator[str]:
    """Every excerpt module name ``name`` imports (``from m import x`` names ``m.x``, which
    resolves to ``m`` when ``x`` is not a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    """Module -> the excerpt modules it imports."""
    mods = modules()

    def resolve(target: str) -> str | None:
        while target and target not in mods:
            target = target.rpartition(".")[0]
        return target or None

    edges: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        for target in imported(name, path):
            found = resolve(target) if target.startswith("excerpt.") else None
            if found and found != name:
                edges[name].add(found)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def package_of(name: str) -> str:
    return ".".join(name.split(".")[:2])


def test_no_module_imports_itself_through_others() -> None:
    assert cycles(graph()) == []


def test_no_package_imports_itself_through_others() -> None:
    packages: dict[str, set[str]] = {}
    for name, targets in graph().items():
        packages.setdefault(package_of(name), set()).update(
            package_of(t) for t in targets if package_of(t) != package_of(name))
    assert cycles(packages) == []


def test_the_check_finds_a_cycle() -> None:
    """The finder itself: a three-module loop beside a chain is reported, the chain is not."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(edges) == [["a", "b", "c"]]
    assert len(graph()) > 100 and "excerpt.store.base" in graph()["excerpt.store.sqlite"]
