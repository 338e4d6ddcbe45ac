"""Who imports whom in ``adapter/``, read from the source with :mod:`ast` (nothing is imported).

The rule (README.md, "Who imports whom"): no import cycle anywhere; the engine imports only
the standard library, itself and the error tree (``adapter/errors.py``, itself standard
library only), but for ``msgspec`` in its message classes (``adapter/engine/messages.py``:
data classes, no I/O); the rulesets import only those and the engine; the protocol does not import
socket.io; the store imports no ruleset, nor do the pipeline and the two that drive it
(``service``, ``replay``): they are handed their rulesets by the one composition root (the
server's ``create_app``, the command line, the bench); nothing but the server itself
and the command line (its entry point) imports ``adapter.server``. Imports under
``if TYPE_CHECKING:`` count too: they are not run, but a circle of them is still two modules
that cannot be read one without the other (engine/context.py and engine/ruleset.py were one).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ADAPTER = Path(__file__).resolve().parent.parent / "adapter"

#: a module -> the project modules and the outside top-level names it imports
Graph = Mapping[str, tuple[frozenset[str], frozenset[str]]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement (module level, in a function, under ``if TYPE_CHECKING:``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def read_graph(root: Path) -> Graph:
    """Each module's imports: project modules (``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module, else ``pkg``) and outside top-level names."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    top = root.name
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        inside: set[str] = set()
        outside: set[str] = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                subs = [f"{base}.{alias.name}" for alias in node.names]
                found = [s for s in subs if s in files]
                targets = found + ([base] if len(found) < len(subs) else [])
            for target in targets:
                if target == top or target.startswith(top + "."):
                    while target not in files:  # ``import adapter.x.y`` of a name in a module
                        target = target.rpartition(".")[0]
                    if target != name:
                        inside.add(target)
                else:
                    outside.add(target.partition(".")[0])
        graph[name] = (frozenset(inside), frozenset(outside))
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """One import cycle (its modules, the first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for nxt in sorted(graph[node][0]):
            if nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            if nxt not in done:
                found = visit(nxt)
                if found:
                    return found
        on_path.discard(path.pop())
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            found = visit(start)
            if found:
                return found
    return None


#: the outside libraries the engine uses, and where: frozen typed message classes (msgspec);
#: a combat's last plan kept as JSON text, some 4 KB instead of a ~9 KB tree (orjson)
MAY_IMPORT = {"adapter.engine.plan": frozenset({"orjson"})}
#: the one model of state and messages, frozen Structs: the engine and the rulesets may import it
MODEL = frozenset({"msgspec"})


#: the modules given their rulesets by the composition root (adapter.pipeline.Rulesets)
HANDED_RULESETS = frozenset({"adapter.pipeline", "adapter.service", "adapter.replay"})


def breaches(graph: Graph) -> list[str]:
    """Every import the dependency rule forbids, as "importer -> imported"."""
    std = sys.stdlib_module_names | {"__future__"}
    found = []
    for name, (inside, outside) in sorted(graph.items()):
        if name in MAY_IMPORT:
            outside = outside - MAY_IMPORT[name]
        if name.startswith("adapter.engine") or name == "adapter.errors":
            allowed: tuple[str, ...] | None = ("adapter.engine",) if name != "adapter.errors" else ()
            inner_ok = {"adapter.errors"} if name != "adapter.errors" else set()
        elif name.startswith("adapter.rulesets"):
            allowed = ("adapter.engine", "adapter.rulesets")
            inner_ok = {"adapter.errors"}
        else:
            allowed, inner_ok = None, set()
        if allowed is not None:
            found += [f"{name} -> {o} (not the standard library)" for o in sorted(outside - std - MODEL)]
            found += [
                f"{name} -> {i}" for i in sorted(inside)
                if i not in inner_ok and not any(i == a or i.startswith(a + ".") for a in allowed)
            ]
        if name.startswith("adapter.store"):  # snapshots decode what the rulesets declare
            found += [f"{name} -> {i} (the store imports no ruleset)" for i in sorted(inside)
                      if i.startswith("adapter.rulesets")]
        if name in HANDED_RULESETS:
            found += [f"{name} -> {i} (handed its rulesets)" for i in sorted(inside)
                      if i == "adapter.rulesets" or i.startswith("adapter.rulesets.")]
        if name.startswith("adapter.protocol") and "socketio" in outside:
            found.append(f"{name} -> socketio (the transport is the server's)")
        if not (name.startswith("adapter.server") or name == "adapter.cli"):
            found += [
                f"{name} -> {i}" for i in sorted(inside)
                if i == "adapter.server" or i.startswith("adapter.server.")
            ]
    return found


@pytest.fixture(scope="module")
def graph() -> Graph:
    return read_graph(ADAPTER)


def test_no_module_of_the_adapter_is_part_of_an_import_cycle(graph: Graph) -> None:
    assert find_cycle(graph) is None


def test_the_engine_and_the_rulesets_import_only_what_the_rule_allows(graph: Graph) -> None:
    assert breaches(graph) == []


def test_the_walk_sees_every_module_and_what_it_imports(graph: Graph) -> None:
    # the real tree: the server reaches the registry, the rulesets the engine, the engine its
    # own modules, the server socket.io (so an empty graph cannot pass the tests above)
    assert "adapter.rulesets" in graph["adapter.server"][0]
    assert "adapter.engine" in graph["adapter.pipeline"][0]
    assert "adapter.engine.ruleset" in graph["adapter.rulesets.storyteller"][0]
    assert "adapter.engine.holding.state" in graph["adapter.engine.holding.declare"][0]
    assert "socketio" in graph["adapter.server.packet"][1]
    assert len(graph) > 80


def _write(root: Path, files: Mapping[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "adapter" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "adapter"


def test_a_cycle_through_a_relative_import_is_found(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "__init__.py": "",
        "engine/__init__.py": "",
        "engine/ruleset.py": "def load():\n    import adapter.rulesets\n",
        "rulesets/__init__.py": "from ..engine.ruleset import load\n",
    })
    assert find_cycle(read_graph(root)) == [
        "adapter.engine.ruleset", "adapter.rulesets", "adapter.engine.ruleset"
    ]


def test_a_package_importing_its_own_half_built_self_is_a_cycle(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "__init__.py": "",
        "hold/__init__.py": "X = 1\nfrom .declare import act\n",
        "hold/declare.py": "from . import X\nact = X\n",
    })
    assert find_cycle(read_graph(root)) == ["adapter.hold", "adapter.hold.declare", "adapter.hold"]


def test_a_cycle_through_type_checking_imports_is_a_cycle(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "__init__.py": "",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n",
        "b.py": "from . import a\n",
    })
    assert find_cycle(read_graph(root)) == ["adapter.a", "adapter.b", "adapter.a"]


def test_an_engine_reaching_out_and_a_core_module_importing_the_server_are_breaches(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path, {
        "__init__.py": "",
        "errors.py": "",
        "engine/__init__.py": "import orjson\nfrom ..errors import X\n",
        "engine/apply.py": "from ..store import open_store\nimport json\n",
        "rulesets/__init__.py": "from ..engine import apply\nfrom ..pipeline import process\n",
        "pipeline.py": "from .server.run import serve\nfrom .rulesets import RULESETS\n",
        "replay.py": "def default():\n    from .rulesets.storyteller import RULESET\n",
        "protocol/__init__.py": "import socketio.packet\n",
        "store/__init__.py": "def codec():\n    from ..rulesets import RULESETS\n",
        "server/__init__.py": "", "server/run.py": "import socketio\n",
        "cli.py": "from .server.run import serve\n",
    })
    assert breaches(read_graph(root)) == [
        "adapter.engine -> orjson (not the standard library)",
        "adapter.engine.apply -> adapter.store",
        "adapter.pipeline -> adapter.rulesets (handed its rulesets)",
        "adapter.pipeline -> adapter.server.run",
        "adapter.protocol -> socketio (the transport is the server's)",
        "adapter.replay -> adapter.rulesets (handed its rulesets)",
        "adapter.rulesets -> adapter.pipeline",
        "adapter.store -> adapter.rulesets (the store imports no ruleset)",
    ]


def test_the_engine_s_code_names_no_ruleset_but_a_world_s_default() -> None:
    from adapter.engine.model import World
    from adapter.rulesets import RULESETS

    named = {
        f"{path.relative_to(ADAPTER)}:{node.lineno}: {node.value}"
        for path in sorted((ADAPTER / "engine").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value in set(RULESETS) - {World(world="w").ruleset}
    }
    assert named == set()
