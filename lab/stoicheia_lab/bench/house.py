"""The shape of the runtime package (issue 37): lines, files, modules calling ``add_pipe``,
import cycles between files, imports inside functions, pipeline builders, and the places a
new head touches, for this checkout and a baseline git revision read from the same repository.

``python -m stoicheia_lab.bench house [--baseline REV] [--out assets/metrics/house.json]``

Counted on the parsed source (no import of the package): an import inside a function is an
``Import``/``ImportFrom`` node below a ``def``; a cycle is a strongly connected set of modules
of the import graph (every import but those under ``if TYPE_CHECKING:``, as
``tests/test_layers.py`` counts them); a builder is a public function of ``assembly.py`` whose
name says it builds or extends a pipeline (``*_pipeline``, ``add_*``, ``extend``, ``assemble``).
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import networkx

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "stoicheia_spacy"

#: Adding a head to ``morph/`` (a new token-level component, e.g. a second morphological
#: head): the files it must touch on this layout, and why. Checked to exist.
NEW_HEAD = (
    ("stoicheia_spacy/morph/<head>.py", "the factory and component (assigns / requires declared there)"),
    ("stoicheia_spacy/morph/settings.py", "its frozen settings block (stoicheia.<Head>Settings.v1)"),
    ("stoicheia_spacy/registrations.py", "MODULES: the registering module, for checkouts without entry points"),
    ("setup.cfg", "the spacy_factories / spacy_misc entry points (kept equal to MODULES by a test)"),
    ("assets/models/grc_stoicheia_doc_clean/config.cfg", "its [components] block and [initialize] weights, "
                                                         "when it ships in the default pipeline"),
)


def _files(rev: str | None) -> dict[str, str]:
    """``{path: source}`` of the package's ``.py`` files in the working tree or at ``rev``."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted((ROOT / PACKAGE).rglob("*.py"))}
    names = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev, PACKAGE],
                           check=True, capture_output=True, text=True).stdout.split()
    return {n: subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{n}"], check=True, capture_output=True,
                              text=True).stdout for n in names if n.endswith(".py")}


def _module(path: str) -> tuple[str, bool]:
    parts = list(Path(path).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def _imports(path: str, tree: ast.AST, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports (TYPE_CHECKING blocks left out)."""
    module, is_package = _module(path)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.orelse:
                    visit_one(sub)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        visit(node)

    visit(tree)
    return {t for t in found if t in modules and t != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected sets of more than one module (networkx)."""
    digraph = networkx.DiGraph([(v, w) for v, targets in graph.items() for w in targets])
    digraph.add_nodes_from(graph)
    return sorted(sorted(group) for group in networkx.strongly_connected_components(digraph) if len(group) > 1)


def _in_function_imports(tree: ast.AST) -> int:
    """Imports with a ``def`` above them (each counted once, nested functions included)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom))
    return len(inside)


def _calls_add_pipe(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_pipe"
               for n in ast.walk(tree))


def _builders(files: dict[str, str]) -> list[str]:
    source = files.get(f"{PACKAGE}/assembly.py", "")
    names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    return sorted(n for n in names if n.endswith("_pipeline") or n.startswith("add_") or n in {"extend", "assemble"})


def measure(rev: str | None) -> dict[str, Any]:
    """The figures of the package in the working tree (``rev`` None) or at ``rev``."""
    files = _files(rev)
    trees = {path: ast.parse(src) for path, src in files.items()}
    modules = {_module(p)[0] for p in files}
    graph = {_module(p)[0]: _imports(p, t, modules) for p, t in trees.items()}
    per_file = {p: _in_function_imports(t) for p, t in trees.items()}
    cycles = _cycles(graph)
    return {
        "revision": rev or "working tree",
        "package_lines": sum(src.count("\n") for src in files.values()),
        "package_files": len(files),
        "modules_calling_add_pipe": sorted(p for p, t in trees.items() if _calls_add_pipe(t)),
        "import_cycles": len(cycles),
        "largest_cycle": max(cycles, key=len) if cycles else [],
        "in_function_imports": sum(per_file.values()),
        "in_function_imports_top": dict(sorted(per_file.items(), key=lambda kv: -kv[1])[:10]),
        "assembly_builders": _builders(files),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stoicheia bench house", description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=None, help="git revision to compare with (e.g. main)")
    parser.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    after = measure(None)
    after["modules_calling_add_pipe_count"] = len(after["modules_calling_add_pipe"])
    result: dict[str, Any] = {"after": after, "new_head_places": [
        {"file": f, "why": why, "exists": "<" in f or (ROOT / f).exists()} for f, why in NEW_HEAD]}
    if args.baseline:
        before = measure(args.baseline)
        before["modules_calling_add_pipe_count"] = len(before["modules_calling_add_pipe"])
        result["before"] = before
    for arm in ("before", "after"):
        if arm in result:
            r = result[arm]
            print(f"{arm} ({r['revision']}): {r['package_lines']} lines, {r['package_files']} files, "
                  f"{r['modules_calling_add_pipe_count']} modules calling add_pipe, {r['import_cycles']} cycles, "
                  f"{r['in_function_imports']} in-function imports, builders {r['assembly_builders']}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
