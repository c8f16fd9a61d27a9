"""Every code block of README.md and docs/*.md runs, and the output it shows is what it prints.

Blocks are collected from the Markdown: fenced ``python`` blocks run in one namespace per file
(in file order, as a reader would type them), ``bash``/``sh``/``shell``/``console`` blocks run
their commands (``stoicheia ...`` through the CLI's own typer application, each loading its
pipeline afresh). Both run in one worker process (``tests/doc_worker.py``), so that the imports
are paid once, in a scratch folder that links to the repository's top-level folders (``assets/``, ``docs/``, ...), so that
the commands read the shipped files and write nowhere in the checkout.

What is asserted:

- every block runs without an error (exit status 0 for shell commands);
- a ``text`` (or ``output``/``conllu``) block right after a code block is that block's standard
  output; a ``python`` statement ending in ``# -> EXPECTED`` must have ``repr`` EXPECTED.
  Whitespace is normalised and ``...`` in the expected text stands for any text.

A block preceded by ``<!-- doc-test: skip (REASON) -->`` is reported as skipped with REASON
(for commands that need a network, a cluster or GPUs). Blocks that use the default pipeline
``grc_stoicheia_doc_clean`` (they name it, run a model command, or follow such a Python block
in the same file) are skipped only when that package is not installed; ``make demo`` and
``make test`` install it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import selectors
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
DEFAULT_PACKAGE = "grc_stoicheia_doc_clean"
PYTHON_LANGS = {"python", "py", "python3"}
SHELL_LANGS = {"bash", "sh", "shell", "console"}
OUTPUT_LANGS = {"text", "output", "conllu"}
#: CLI commands that run a pipeline (the default one unless ``--model`` names another).
MODEL_COMMANDS = {"restore", "accentuate", "parse", "scan", "date", "annotate", "serve", "demo"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
SKIP = re.compile(r"<!--\s*doc-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
BLOCK_TIMEOUT_S = 900


@dataclass
class Block:
    """One fenced code block of a Markdown file."""

    file: str
    line: int  # 1-based line of the block's first code line
    lang: str
    code: str
    skip: str | None = None
    output: str | None = None
    needs_default: bool = False

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def kind(self) -> str:
        return "python" if self.lang in PYTHON_LANGS else "shell"


def _console_to_shell(code: str) -> tuple[str, str | None]:
    """A ``console`` block's ``$ `` commands, and the lines it shows after them as output."""
    commands, shown = [], []
    for line in code.splitlines():
        if line.startswith("$ "):
            commands.append(line[2:])
        elif commands and commands[-1].endswith("\\"):
            commands.append(line)
        else:
            shown.append(line)
    output = "\n".join(shown).strip()
    return "\n".join(commands), output or None


def _needs_default(block: Block) -> bool:
    if DEFAULT_PACKAGE in block.code:
        return True
    if block.kind == "shell":
        return any(re.search(rf"(^|\s)stoicheia\s+{cmd}\b", block.code, re.M) for cmd in MODEL_COMMANDS)
    return False


def collect_blocks(path: Path, root: Path = REPO_ROOT) -> list[Block]:
    """The executable blocks of one Markdown file, with their skip markers and shown output."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    raw: list[tuple[int, int, str, str, str | None]] = []  # start, end, lang, code, skip
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, lang = match["fence"], match["lang"].lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        code = textwrap.dedent("\n".join(lines[i + 1:j]))
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        skip = SKIP.search(lines[k]) if k >= 0 else None
        raw.append((i, j, lang, code, skip["reason"].strip() if skip else None))
        i = j + 1
    blocks: list[Block] = []
    for n, (start, end, lang, code, skip) in enumerate(raw):
        if lang not in PYTHON_LANGS | SHELL_LANGS:
            continue
        output = None
        if lang == "console":
            code, output = _console_to_shell(code)
        if n + 1 < len(raw) and raw[n + 1][2] in OUTPUT_LANGS:
            between = lines[end + 1: raw[n + 1][0]]
            if all(not line.strip() for line in between):
                output = raw[n + 1][3]
        block = Block(name, start + 2, lang, code, skip, output)
        block.needs_default = _needs_default(block)
        blocks.append(block)
    # Python blocks share one namespace (and folder) per file: after a block that uses the default
    # pipeline, the later ones may use what it made.
    seen_default = False
    for block in blocks:
        if block.kind == "python" and seen_default:
            block.needs_default = True
        seen_default = seen_default or block.needs_default
    return blocks


def normalise(text: str) -> str:
    return " ".join(ANSI.sub("", text).split())


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` is ``expected`` up to whitespace, ``...`` standing for any text."""
    parts = re.split(r"\s*\.\.\.\s*", normalise(expected))
    return re.fullmatch(".*?".join(re.escape(p) for p in parts), normalise(actual), re.DOTALL) is not None


BLOCKS = [block for path in DOC_FILES if path.is_file() for block in collect_blocks(path)]


class DocWorker:
    """The worker process of ``tests/doc_worker.py`` and which blocks it has run."""

    def __init__(self, workdir: Path) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        env["ANSI_COLORS_DISABLED"] = "1"
        env["COLUMNS"] = "80"  # dividers and tables as wide as on an 80-column terminal
        env.setdefault("OMP_NUM_THREADS", "1")
        self.log = (workdir / "worker.log").open("w")
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("doc_worker.py")), str(workdir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env, text=True, encoding="utf-8")
        self.ran: set[str] = set()

    def request(self, block: Block) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"op": block.kind, "file": block.file, "line": block.line, "code": block.code}
        self.proc.stdin.write(json.dumps(message, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        if not selector.select(BLOCK_TIMEOUT_S):
            self.proc.kill()
            raise AssertionError(f"{block.id} ran for over {BLOCK_TIMEOUT_S} s")
        answer = self.proc.stdout.readline()
        if not answer:
            raise AssertionError(f"the worker died running {block.id}; see {self.log.name}")
        self.ran.add(block.id)
        return json.loads(answer)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def doc_worker(tmp_path_factory: pytest.TempPathFactory):
    workdir = tmp_path_factory.mktemp("docs")
    for entry in REPO_ROOT.iterdir():
        if entry.name not in {".git", ".venv"} and not entry.name.startswith("."):
            (workdir / entry.name).symlink_to(entry)
    worker = DocWorker(workdir)
    yield worker
    worker.close()


def _default_installed() -> bool:
    return importlib.util.find_spec(DEFAULT_PACKAGE) is not None


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block: Block, doc_worker: DocWorker) -> None:
    if block.skip is not None:
        pytest.skip(f"{block.id}: {block.skip}")
    if block.needs_default and not _default_installed():
        pytest.skip(f"{block.id}: needs the default pipeline {DEFAULT_PACKAGE} (make demo or make test installs it)")
    for earlier in BLOCKS:  # a block run alone (-k) first gets what the page's earlier blocks make
        if earlier is block:
            break
        if (earlier.file == block.file and earlier.skip is None and earlier.id not in doc_worker.ran
                and (_default_installed() or not earlier.needs_default)):
            doc_worker.request(earlier)
    answer = doc_worker.request(block)
    assert answer["error"] is None, f"{block.id} failed:\n{answer['error']}\nstdout:\n{answer['stdout']}"
    for line, expected, actual in answer["arrows"]:
        assert output_matches(expected, actual), f"{block.file}:{line}: shows {expected}, gives {actual}"
    if block.output is not None:
        assert output_matches(block.output, answer["stdout"]), (
            f"{block.id} shows:\n{block.output}\nbut prints:\n{answer['stdout']}")


def test_docs_have_blocks() -> None:
    files = {block.file for block in BLOCKS}
    assert "README.md" in files
    skipped = [b for b in BLOCKS if b.skip is not None]
    assert len(skipped) <= len(BLOCKS) // 4, f"too many skipped blocks: {[b.id for b in skipped]}"
    assert all(b.skip for b in skipped), "a skip marker needs a reason: <!-- doc-test: skip (REASON) -->"


def test_collector_reads_markers_and_output(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        Restore a gap:

        ```bash
        stoicheia restore "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"
        ```

        ```text
        ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ
        ```

        <!-- doc-test: skip (needs a Ray cluster) -->
        ```bash
        stoicheia annotate corpus/ --engine ray --address auto
        ```

        ```python
        import stoicheia_spacy as st
        st.decode_planes(st.encode_planes("λόγος"))  # -> 'λόγος'
        ```

        ```json
        {"not": "run"}
        ```
        """), encoding="utf-8")
    blocks = collect_blocks(page, root=tmp_path)
    assert [(b.line, b.lang, b.skip) for b in blocks] == [(4, "bash", None), (13, "bash", "needs a Ray cluster"),
                                                          (17, "python", None)]
    assert blocks[0].output == "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ"
    assert blocks[0].needs_default and blocks[1].needs_default
    assert blocks[2].needs_default  # a Python block after one that used the default pipeline
    assert blocks[2].output is None


def test_output_matching() -> None:
    assert output_matches("ἔδοξε τῇ   βουλῇ\n[...] τῷ δήμῳ", "ἔδοξε τῇ βουλῇ [...] τῷ δήμῳ\n")
    assert output_matches("restored: ἔδοξε ... δήμῳ", "restored: ἔδοξε τῇ βουλῇ [καὶ] τῷ δήμῳ")
    assert output_matches("1 ...\n3", "1 two\n3")
    assert not output_matches("ἔδοξε τῇ βουλῇ", "ἔδοξε τῇ βουλῇ καὶ")
    assert not output_matches("a ... c", "a b d")
