"""The process that runs the documentation's code blocks for ``tests/test_docs.py``.

It reads one JSON request per line on stdin and answers one JSON line on the stdout it was
started with (the blocks' own output is captured, never mixed with the answers):

- ``{"op": "python", "file": F, "line": N, "code": C}`` runs a Python block in the namespace
  of Markdown file ``F`` (blocks of one file share their names, as a reader's session would).
  Each top-level statement runs in turn; a statement ending in a ``# -> EXPECTED`` comment is
  evaluated and its ``repr`` returned for the test to compare; the value of a final bare
  expression is printed, as a notebook shows it.
- ``{"op": "shell", "code": C}`` runs a shell block line by line (``\\``-continued lines
  joined, comments dropped). A plain ``stoicheia ...`` command runs the ``stoicheia`` typer
  application in this process: it loads its pipeline afresh, as the command does, but the
  imports (torch, spaCy, the package) are paid once, which makes a command seconds instead of
  a fresh process's 15-20 s. Any other line (pipes, redirections, ``$``, a here-document) runs
  in ``bash`` with this interpreter's ``bin/`` first on ``PATH``.

Answers: ``{"stdout": ..., "error": null | traceback, "arrows": [[line, expected, actual]]}``.
Every block runs with the working directory given at start-up (``argv[1]``).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tokenize
import traceback
from pathlib import Path
from typing import Any

SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&"}
_NAMESPACES: dict[str, dict[str, Any]] = {}


def arrow_comments(code: str) -> dict[int, str]:
    """``{line: expected}`` for every ``# -> expected`` comment (1-based lines of ``code``)."""
    arrows: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith("# ->"):
            arrows[tok.start[0]] = tok.string[len("# ->"):].strip()
    return arrows


def run_python(file: str, line: int, code: str) -> dict[str, Any]:
    namespace = _NAMESPACES.setdefault(file, {"__name__": "__main__"})
    tree = ast.parse(code)
    arrows = arrow_comments(code)
    results: list[list[Any]] = []
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            for i, stmt in enumerate(tree.body):
                ast.increment_lineno(stmt, line - 1)  # tracebacks name the Markdown line
                span = range(stmt.lineno - line + 1, (stmt.end_lineno or stmt.lineno) - line + 2)
                expected = [arrows[n] for n in span if n in arrows]
                last = i == len(tree.body) - 1
                filename = f"{file}:{line}"
                if isinstance(stmt, ast.Expr):
                    value = eval(compile(ast.Expression(stmt.value), filename, "eval"), namespace)
                    if expected:
                        results.append([stmt.lineno, expected[-1], repr(value)])
                    elif last and value is not None:
                        print(repr(value))
                else:
                    exec(compile(ast.Module([stmt], type_ignores=[]), filename, "exec"), namespace)
                    if expected and isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                        results.append([stmt.lineno, expected[-1], repr(namespace[stmt.targets[0].id])])
    except (Exception, SystemExit):  # a failing block is reported, not fatal
        return {"stdout": out.getvalue(), "error": traceback.format_exc(), "arrows": results}
    return {"stdout": out.getvalue(), "error": None, "arrows": results}


HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def logical_lines(code: str) -> list[str]:
    """Shell lines with ``\\`` continuations joined, a here-document kept with its command (as one
    multi-line entry), and blank/comment lines dropped."""
    lines: list[str] = []
    pending = ""
    raws = iter(code.splitlines())
    for raw in raws:
        text = raw.rstrip()
        heredoc = HEREDOC.search(text)
        if heredoc and not pending:
            body = [text]
            for more in raws:
                body.append(more)
                if more.strip() == heredoc.group(1):
                    break
            lines.append("\n".join(body))
            continue
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text = pending + text
        pending = ""
        if text.strip() and not text.strip().startswith("#"):
            lines.append(text.strip())
    if pending.strip():
        lines.append(pending.strip())
    return lines


def run_cli(argv: list[str]) -> tuple[str, str | None]:
    """Run ``stoicheia ARGV`` in this process; its stdout and an error, if any."""
    from stoicheia_spacy.cli.app import app, run

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = run(app, argv, prog_name="stoicheia")
    except (Exception, SystemExit):
        return out.getvalue(), traceback.format_exc()
    if code != 0:
        return out.getvalue(), f"stoicheia {shlex.join(argv)} exited with status {code}"
    return out.getvalue(), None


def run_shell(code: str) -> dict[str, Any]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    stdout = []
    for text in logical_lines(code):
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = []
        if (words and words[0] == "stoicheia" and not SHELL_OPERATORS & set(words)
                and not {"$", "`", "\n"} & set(text)):
            out, error = run_cli(words[1:])
        else:
            sys.stdout.flush()
            proc = subprocess.run(["bash", "-c", text], env=env, capture_output=True, text=True)
            out = proc.stdout
            error = None if proc.returncode == 0 else f"`{text}` exited with status {proc.returncode}:\n{proc.stderr[-4000:]}"
        stdout.append(out)
        if error:
            return {"stdout": "".join(stdout), "error": error, "arrows": []}
    return {"stdout": "".join(stdout), "error": None, "arrows": []}


def main() -> None:
    os.chdir(sys.argv[1])
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything written to fd 1 by C code or children goes to stderr, not the answers
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    for request_line in sys.stdin:
        request = json.loads(request_line)
        if request["op"] == "python":
            answer = run_python(request["file"], request["line"], request["code"])
        else:
            answer = run_shell(request["code"])
        answers.write(json.dumps(answer, ensure_ascii=False) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
