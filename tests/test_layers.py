"""The package's layers (docs/development.md): parse every module's imports and fail on an
import cycle between files or an import against the layers.

- the ground floor imports no component room;
- a room imports the ground floor, itself, or a declared service of another room (:data:`SERVICES`);
- ``cli``, ``serve``, ``annotate``, ``provenance`` and the assembly modules sit above;
- nothing in the package imports the lab (``stoicheia_lab``) or ``pretrain``.

Every import counts (module level or inside a function); ``if TYPE_CHECKING:`` blocks count for
the layers but not for cycles, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx

PACKAGE = Path(__file__).resolve().parents[1] / "stoicheia_spacy"
NAME = "stoicheia_spacy"

#: First-level names of the ground floor: import no room.
GROUND = frozenset({"alphabet", "assets", "backbone", "codec", "component", "errors", "records", "heads", "heap",
                    "htmlpage", "leiden", "textcheck", "textnorm", "tokenizer"})
#: The component rooms.
ROOMS = frozenset({"accent", "date", "encoder", "morph", "parallels", "restore", "scan"})
#: Above the rooms: they may import anything of the package.
ABOVE = frozenset({"annotate", "assembly", "cli", "legacy_config", "provenance", "register_components",
                   "registered", "registrations", "released_heads", "serve"})
#: Modules of a room that other rooms may import, and why.
SERVICES: dict[str, str] = {
    "encoder.listener": "the heads read the encoder's output through its listener",
    "encoder.reference": "components that run the backbone themselves reach it through a reference",
    "encoder.pooler": "word vectors pooled from the encoder's letter states",
    "encoder.types": "the encoder's per-Doc data (doc._.stoicheia)",
    "encoder.states": "what a component reads of the encoder's letter states, kept once per forward (its need)",
    "encoder.metadata": "the region / century a Doc carries into the backbone",
    "encoder.token_planes": "per-token planes of the encoder's parse and the sentences the heads read",
    "encoder.gaps": "the one route from a Doc's text (gaps included) to the planes the backbone reads",
    "restore.accented": "accented restoration candidates (the accentuator's; #37 item 4 turns this around)",
    "restore.domain": "a Doc's text domain (doc._.domain), whose own form-table weights the morphology takes too",
    "accent.lexasset": "the data-package pins (accent lexicon, macron lexicon, restoration LM, parallels index)",
    "parallels.index": "the parallels index of the open corpus, which the restorer's parallels service reads",
    "parallels.search": "the parallels searches (per candidate, leave-own-document-out) the restorer's service runs",
}
FORBIDDEN = ("stoicheia_lab", "pretrain")


def _module(path: Path) -> tuple[str, bool]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


MODULES = {_module(p)[0]: p for p in PACKAGE.rglob("*.py")}


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside TYPE_CHECKING) for every import of ``path``."""
    module, is_package = _module(path)
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.body:
                    visit_one(sub, True)
                for sub in child.orelse:
                    visit_one(sub, typing_only)
            else:
                visit_one(child, typing_only)

    def visit_one(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.append((sub if sub in MODULES else target, node.lineno, typing_only))
        visit(node, typing_only)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return found


EDGES = {module: _imports(path) for module, path in MODULES.items()}


def _first(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def _floor(module: str) -> str:
    first = _first(module)
    if first in GROUND:
        return "ground"
    if first in ROOMS:
        return "room"
    if first in ABOVE or module == NAME:
        return "above"
    return "unplaced"


def test_every_module_has_a_layer() -> None:
    assert sorted(m for m in MODULES if _floor(m) == "unplaced") == []


def test_no_import_of_the_lab_or_pretrain() -> None:
    bad = [f"{m}:{line} imports {t}" for m, edges in EDGES.items() for t, line, _ in edges
           if t.split(".")[0] in FORBIDDEN]
    assert bad == []


def test_imports_follow_the_layers() -> None:
    bad = []
    for module, edges in EDGES.items():
        floor = _floor(module)
        for target, line, _ in edges:
            if not target.startswith(NAME + ".") or floor == "above":
                continue
            where = f"{module}:{line} imports {target}"
            if floor == "ground" and _floor(target) != "ground":
                bad.append(where)
            elif floor == "room":
                if _floor(target) == "above":
                    bad.append(where)
                elif _floor(target) == "room" and _first(target) != _first(module) \
                        and target.removeprefix(NAME + ".") not in SERVICES:
                    bad.append(where)
    assert bad == []


def test_declared_services_exist() -> None:
    assert [s for s in SERVICES if f"{NAME}.{s}" not in MODULES] == []


def _cycles() -> list[list[str]]:
    """Sets of more than one module that import each other (strongly connected, networkx)."""
    graph = networkx.DiGraph([(m, t) for m, edges in EDGES.items() for t, _, typing_only in edges
                              if t in MODULES and t != m and not typing_only])
    return sorted(sorted(group) for group in networkx.strongly_connected_components(graph) if len(group) > 1)


def test_no_import_cycle_between_files() -> None:
    assert _cycles() == []


def test_development_doc_names_every_folder_and_its_floor() -> None:
    """docs/development.md lists every first-level folder and module of the package."""
    doc = (PACKAGE.parent / "docs" / "development.md").read_text(encoding="utf-8")
    names = {f"`{p.name}/`" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    names |= {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    missing = sorted(n for n in names if n not in doc)
    assert missing == []
    assert {_first(m) for m in MODULES} - {""} <= GROUND | ROOMS | ABOVE


def test_one_module_calls_add_pipe() -> None:
    """spaCy's config is the one way to assemble: only ``assembly.extend`` adds a component."""
    callers = sorted(m for m, path in MODULES.items()
                     if any(isinstance(node, ast.Attribute) and node.attr == "add_pipe"
                            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert callers == ["stoicheia_spacy.assembly"]
