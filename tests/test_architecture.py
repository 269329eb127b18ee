"""The package's shape: layers whose imports point one way, no import cycle, small modules.

Layers, lowest first (a module may import its own layer and those below it, never above):

    base < safety < patches < sandbox < llm < tools < agent < lsp < acp < cli

The hosts `lsp` (the Language Server Protocol) and `acp` (the Agent Client Protocol) are peers:
neither imports the other; each hands the agent an approver and an event sink.

Every import counts, also those inside functions: a lazy import is still an arrow. A module
over MAX_LINES lines, an upward import or a cycle between modules fails here with the names
that break the rule.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from smol_instruments.base import pyast

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "smol_instruments"
LAYERS = ("base", "safety", "patches", "sandbox", "llm", "tools", "agent", "lsp", "acp", "cli")
MAX_LINES = 600

#: Known debts, each with the work that removes it. The test fails when one is paid and still
#: listed, so this list only shrinks.
KNOWN_LARGE: set[str] = set()
KNOWN_CYCLES: set[frozenset[str]] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Every module of ours that `name` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(pyast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in known and target != name:
                found.add(target)
    return found


def _layer(name: str) -> int | None:
    parts = name.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def test_every_module_belongs_to_a_layer() -> None:
    stray = [
        name
        for name in _modules()
        if _layer(name) is None and name not in ("smol_instruments", "smol_instruments.__main__")
    ]
    assert not stray, f"modules outside the layers {LAYERS}: {stray}"


def test_no_module_imports_a_layer_above_its_own(graph: dict[str, set[str]]) -> None:
    upward = []
    for name, targets in graph.items():
        own = _layer(name)
        if own is None:
            continue
        for target in sorted(targets):
            layer = _layer(target)
            if layer is not None and layer > own:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports pointing up the layers:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    cycles = [c for c in _cycles(graph) if frozenset(c) not in KNOWN_CYCLES]
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in {frozenset(c) for c in _cycles(graph)}]
    assert not stale, f"cycles fixed but still listed as known: {stale}"


def test_the_editor_hosts_do_not_import_each_other(graph: dict[str, set[str]]) -> None:
    """A new host is new files beside the others, never a change to them."""
    hosts = ("smol_instruments.lsp", "smol_instruments.acp")
    crossing = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in sorted(targets)
        for own, other in (hosts, hosts[::-1])
        if name.startswith(own) and target.startswith(other)
    ]
    assert not crossing, "one editor host imports the other:\n" + "\n".join(crossing)


def test_only_the_daemon_app_imports_its_features(graph: dict[str, set[str]]) -> None:
    """lsp/server.py is state; lsp/app.py lists the features and gives each its dependencies."""
    features = "smol_instruments.lsp.features"
    importers = [
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in sorted(targets)
        if target.startswith(features + ".")
        and name != "smol_instruments.lsp.app"
        and not name.startswith(features + ".")
    ]
    assert not importers, "feature modules imported outside lsp/app.py:\n" + "\n".join(importers)


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in _modules().items()}
    large = {name: n for name, n in sizes.items() if n > MAX_LINES and name not in KNOWN_LARGE}
    assert not large, f"modules over {MAX_LINES} lines: {large}"
    paid = sorted(name for name in KNOWN_LARGE if sizes.get(name, 0) <= MAX_LINES)
    assert not paid, f"no longer over the limit, remove from KNOWN_LARGE: {paid}"


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    """The walker sees a lazy import inside a function (the arrows hidden before)."""
    module = tmp_path / "pkg" / "base" / "thing.py"
    module.parent.mkdir(parents=True)
    module.write_text("def f():\n    from ..agent import session\n    return session\n")
    known = {"pkg.agent", "pkg.agent.session", "pkg.base.thing"}
    found = _imports("pkg.base.thing", module, known)
    assert found == {"pkg.agent", "pkg.agent.session"}
