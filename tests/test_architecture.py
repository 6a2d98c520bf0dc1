"""The shape of the code base: a one-way import hierarchy (no import cycle in src/lenex, the
imports inside functions included, since they only hide a cycle from the interpreter; the library
below the papers and tools, in imports and in the module names its strings hold). A file is as long
as its one concern needs: there is no line cap, which once split concerns across files."""
from __future__ import annotations

import ast
import re
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "lenex"

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


# The layers (docs/architecture.md): the generic library at the root of src/lenex (with tables/,
# claims/ and pipeline/, the workflow's Python), and above it the three papers and the tools beside
# them. The library imports neither, and names none of their modules in a string it uses (a
# registry is filled from above: a paper or a model family registers itself in its own package,
# which the registry finds, lenex.registry). A paper never imports another paper. A tool may use a paper's measure (the
# Hugging Face profile reads LEX's attention resolution, the scale study scores with the
# receptive-field protocol) and a paper a tool (the segmented paper reads the released checkpoints
# through hf), as long as no import runs in a circle (test_no_import_cycle_in_lenex). The papers
# are the packages holding a paper.py, and those outside entry points declare (paper_packages): a
# fourth paper is one by its paper.py.
TOOLS = ("lenex.hf", "lenex.scale_study", "lenex.fairseq_backend", "lenex.fairseq_plugin")


def paper_package(module: str) -> str:
    """The package of a paper's module (or of an entry point `lenex.papers`'s value): `lenex.lex.paper`
    is lenex.lex's (a paper under lenex is lenex.<package>; one outside it, its top package)."""
    parts = module.split(":")[0].split(".")
    return ".".join(parts[:2]) if parts[0] == "lenex" else parts[0]


def paper_packages() -> tuple[str, ...]:
    """Every registered paper's package, from the registry's paper.py files and the entry points of
    packages outside the tree (none is loaded)."""
    from lenex.pipeline.papers import PAPERS

    modules = [*PAPERS.in_tree_modules().values(), *(point.value for point in PAPERS.outside_entry_points())]
    return tuple(sorted({paper_package(module) for module in modules}))


PAPERS = paper_packages()


def test_the_papers_are_the_registered_ones():
    """Read from the files and entry points without loading them, they are the packages of the loaded papers."""
    from lenex.pipeline.papers import registered

    assert PAPERS == tuple(sorted(paper_package(type(paper).__module__) for paper in registered().values()))
    assert "lenex.lex" in PAPERS and not {"lenex", "lenex.pipeline"} & set(PAPERS)
    assert paper_package("lenex.toy.paper:PAPER") == "lenex.toy" and paper_package("toy.paper:PAPER") == "toy"


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def upward_imports(edges: Edges, papers: tuple[str, ...] = PAPERS) -> list[str]:
    """Imports of a paper or a tool by the library, and of a paper by another paper."""
    found = []
    for (a, b), where in edges.items():
        library_up = _within(b, papers + TOOLS) and not _within(a, papers + TOOLS)
        paper_to_paper = _within(a, papers) and _within(b, papers) and _package(a) != _package(b)
        if library_up or paper_to_paper:
            found.append(f"{a} -> {b} ({where})")
    return sorted(found)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def upward_names(package_dir: Path, papers: tuple[str, ...] = PAPERS) -> list[str]:
    """Strings a library module uses (docstrings aside) that name a module of a paper or a tool: a
    dependency an import-based check cannot see ("module:function" imported on use)."""
    upper = re.compile(r"\b(" + "|".join(re.escape(p) for p in papers + TOOLS) + r")\b")
    found = []
    for module, path in module_files(package_dir).items():
        if _within(module, papers + TOOLS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        documentation = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in documentation:
                for match in upper.finditer(node.value):
                    found.append(f"{module} names {match[0]} ({path.relative_to(package_dir.parent.parent)}:{node.lineno})")
    return found


def test_upward_imports_are_found():
    edges = {("lenex.tables.render", "lenex.segmented.tables"): "src/lenex/tables/render.py:3",
             ("lenex.records.checkpoint", "lenex.hf.models"): "src/lenex/records/checkpoint.py:40",
             ("lenex.segmented.tables", "lenex.tables.render"): "src/lenex/segmented/tables.py:9",
             ("lenex.segmented.figures", "lenex.lex.figures"): "src/lenex/segmented/figures.py:4",
             ("lenex.lex.figures", "lenex.lex.targets"): "src/lenex/lex/figures.py:5",
             ("lenex.hf.profile", "lenex.lex.resolution"): "src/lenex/hf/profile.py:37"}
    assert upward_imports(edges) == [
        "lenex.records.checkpoint -> lenex.hf.models (src/lenex/records/checkpoint.py:40)",
        "lenex.segmented.figures -> lenex.lex.figures (src/lenex/segmented/figures.py:4)",
        "lenex.tables.render -> lenex.segmented.tables (src/lenex/tables/render.py:3)"]


def test_a_module_named_in_a_string_from_below_is_found(tmp_path):
    pkg = tmp_path / "src" / "lenex"
    (pkg / "hf").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "hf" / "__init__.py").write_text('NAME = "lenex.hf.models"\n')  # a tool naming itself: fine
    (pkg / "checkpoint.py").write_text('"""Formats (lenex.hf.models registers one)."""\n'
                                       'FORMATS = {"hf": "lenex.hf.models:HFLanguageModel"}\n')
    assert upward_names(pkg) == ["lenex.checkpoint names lenex.hf (src/lenex/checkpoint.py:2)"]


def test_the_library_never_imports_a_paper_or_a_tool_and_papers_not_each_other():
    found = upward_imports(import_edges(PACKAGE))
    assert not found, "imports against the layers (docs/architecture.md):\n" + "\n".join(found)


def test_the_library_names_no_module_of_a_paper_or_a_tool():
    found = upward_names(PACKAGE)
    assert not found, "the library names a module above it (register it from there instead):\n" + "\n".join(found)


def test_each_paper_package_has_its_targets_and_its_interface():
    for paper in PAPERS:
        folder = PACKAGE / paper.split(".")[1]
        assert (folder / "targets.py").is_file() and (folder / "paper.py").is_file(), paper
