"""The shape of the code base: a one-way import hierarchy (no import cycle in src/lenex, the
imports inside functions included, since they only hide a cycle from the interpreter) and
short files (none over 400 lines)."""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "lenex"
MAX_LINES = 400
SHORT_FILE_DIRS = ("src", "tests", "workflow", "scripts", "benchmarks")

# (importing module, imported module) -> "file:line" of the import statement.
Edges = dict[tuple[str, str], str]


def module_files(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``package_dir`` (a package)."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported(node: ast.AST, module: str, is_package: bool, modules: dict) -> list[str]:
    """The modules of the package that one import statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:  # relative: level 1 is the importing module's own package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    if source not in modules:
        return []
    # `from pkg import sub` imports the submodule; `from mod import name` the module itself.
    return [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source for a in node.names]


def import_edges(package_dir: Path) -> Edges:
    """Every import between modules of the package, wherever it stands in the file."""
    modules = module_files(package_dir)
    edges: Edges = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported(node, module, path.name == "__init__.py", modules):
                if target != module:
                    where = f"{path.relative_to(package_dir.parent.parent)}:{node.lineno}"
                    edges.setdefault((module, target), where)
    return edges


def _shortest_cycle(start: str, successors: dict[str, list[str]]) -> list[str]:
    """The shortest path start -> ... -> start (breadth first)."""
    came_from = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in successors.get(node, []):
            if nxt == start:
                path = [node]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return path[::-1] + [start]  # path runs node -> ... -> start
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return []


def import_cycles(edges: Edges, within: str = "") -> list[str]:
    """One readable cycle per group of modules that import each other (directly or not),
    e.g. ``a -> b (src/a.py:3) -> a (src/b.py:9)``; only modules under ``within``."""
    successors: dict[str, list[str]] = {}
    for (a, b) in sorted(edges):
        if a.startswith(within) and b.startswith(within):
            successors.setdefault(a, []).append(b)
    found, seen = [], set()
    for start in sorted(successors):
        if start in seen:
            continue
        cycle = _shortest_cycle(start, successors)
        if cycle:
            seen.update(cycle)
            steps = [f"{b} ({edges[a, b]})" for a, b in zip(cycle, cycle[1:])]
            found.append(" -> ".join([cycle[0]] + steps))
    return found


def test_finder_sees_a_cycle_hidden_inside_a_function(tmp_path):
    pkg = tmp_path / "src" / "toy"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("import os\n\ndef f():\n    from ..c import g\n    return g\n")
    (pkg / "c.py").write_text("def g():\n    from toy import a\n")
    (pkg / "d.py").write_text("from .a import nothing\nfrom . import c\n")  # imports, but no cycle
    edges = import_edges(pkg)
    assert edges[("toy.sub.b", "toy.c")] == "src/toy/sub/b.py:4"
    assert ("toy.d", "toy.a") in edges and ("toy.d", "toy.c") in edges
    assert import_cycles(edges) == [
        "toy.a -> toy.sub.b (src/toy/a.py:1) -> toy.c (src/toy/sub/b.py:4) -> toy.a (src/toy/c.py:2)"]
    assert import_cycles(edges, within="toy.sub") == []


def test_no_import_cycle_in_data():
    cycles = import_cycles(import_edges(PACKAGE), within="lenex.data.")
    assert not cycles, "import cycles in lenex.data:\n" + "\n".join(cycles)


def test_no_import_cycle_in_lenex():
    cycles = import_cycles(import_edges(PACKAGE))
    assert not cycles, "import cycles in lenex:\n" + "\n".join(cycles)


def long_files(root: Path, limit: int = MAX_LINES) -> list[str]:
    found = []
    for folder in SHORT_FILE_DIRS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".py", ".smk") and path.is_file():
                lines = len(path.read_text(encoding="utf-8").splitlines())
                if lines > limit:
                    found.append(f"{path.relative_to(root)}: {lines} lines")
    return found


def test_long_file_finder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "workflow").mkdir()
    (tmp_path / "src" / "ok.py").write_text("x = 1\n" * 3)
    (tmp_path / "workflow" / "big.smk").write_text("rule a:\n" * 4)
    (tmp_path / "workflow" / "notes.md").write_text("text\n" * 9)
    assert long_files(tmp_path, limit=3) == ["workflow/big.smk: 4 lines"]


def test_no_file_over_400_lines():
    found = long_files(ROOT)
    assert not found, f"files over {MAX_LINES} lines (split them by concern):\n" + "\n".join(found)


# A library and three apps: the papers import the library, never the other way round. The tools
# beside the papers (the Hugging Face profile reads LEX's attention resolution) may use a paper's
# measure; the generic library may not.
PAPERS = ("lenex.lex", "lenex.receptive_field", "lenex.segmented")
TOOLS = ("lenex.hf", "lenex.scale_study", "lenex.fairseq_backend", "lenex.fairseq_plugin")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def library_imports_of_papers(edges: Edges) -> list[str]:
    return sorted(f"{a} -> {b} ({where})" for (a, b), where in edges.items()
                  if _within(b, PAPERS) and not _within(a, PAPERS + TOOLS))


def test_library_import_of_a_paper_is_found():
    edges = {("lenex.tables.render", "lenex.segmented.tables"): "src/lenex/tables/render.py:3",
             ("lenex.segmented.tables", "lenex.tables.render"): "src/lenex/segmented/tables.py:9",
             ("lenex.hf.profile", "lenex.lex.resolution"): "src/lenex/hf/profile.py:37"}
    assert library_imports_of_papers(edges) == [
        "lenex.tables.render -> lenex.segmented.tables (src/lenex/tables/render.py:3)"]


def test_the_library_never_imports_a_paper():
    found = library_imports_of_papers(import_edges(PACKAGE))
    assert not found, "the generic library imports a paper package:\n" + "\n".join(found)


def test_each_paper_package_has_its_targets_module():
    for paper in PAPERS:
        assert (PACKAGE / paper.split(".")[1] / "targets.py").is_file(), f"{paper} has no targets module"
