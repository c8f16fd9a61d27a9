"""Metre automata over syllable weights, loaded from data files.

A metre is a regular pattern over the weight symbols ``H`` (heavy) and ``L``
(light), with ``X`` standing for either (anceps, brevis in longo).  Patterns use
a small regex subset: concatenation, ``|``, parentheses, and the quantifiers
``?``, ``*``, ``+``, ``{n}``, ``{m,n}``, ``{n,}``; whitespace is ignored.  Each
pattern is compiled (Thompson NFA, then subset construction) into a
deterministic automaton whose transition table drives the Viterbi decoder in
:mod:`stoicheia_spacy.scan.viterbi`.

The shipped metres live in ``assets/meters/*.json`` (schema in that folder's
README); users add their own files and pass them to :func:`load_meters`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError

#: Weight symbols, in the column order used by the decoders (0 = heavy, 1 = light).
WEIGHTS = "HL"
HEAVY, LIGHT = 0, 1
_SYMBOLS = {"H": (HEAVY,), "L": (LIGHT,), "X": (HEAVY, LIGHT)}

#: Environment variable naming an extra folder of metre files, searched after the defaults.


# --------------------------------------------------------------------------- parsing
# AST nodes: ("sym", ids) | ("cat", [nodes]) | ("alt", [nodes]) | ("rep", node, lo, hi|None)
_Node = tuple


class _Parser:
    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.text = re.sub(r"\s+", "", pattern)
        self.pos = 0

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"metre pattern {self.src!r}: {message} (at {self.pos})")

    def peek(self) -> str | None:
        return self.text[self.pos] if self.pos < len(self.text) else None

    def parse(self) -> _Node:
        if not self.text:
            raise self.error("empty pattern")
        node = self.alternation()
        if self.pos != len(self.text):
            raise self.error(f"unexpected {self.text[self.pos]!r}")
        return node

    def alternation(self) -> _Node:
        branches = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> _Node:
        items: list[_Node] = []
        while self.peek() not in (None, "|", ")"):
            items.append(self.repeat())
        if not items:
            raise self.error("empty alternative")
        return items[0] if len(items) == 1 else ("cat", items)

    def repeat(self) -> _Node:
        node = self.atom()
        while True:
            char = self.peek()
            if char == "?":
                node, self.pos = ("rep", node, 0, 1), self.pos + 1
            elif char == "*":
                node, self.pos = ("rep", node, 0, None), self.pos + 1
            elif char == "+":
                node, self.pos = ("rep", node, 1, None), self.pos + 1
            elif char == "{":
                match = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.pos)
                if match is None:
                    raise self.error("bad {m,n} quantifier")
                lo = int(match.group(1))
                hi: int | None = lo
                if match.group(2):
                    hi = int(match.group(3)) if match.group(3) else None
                if hi is not None and hi < lo:
                    raise self.error("quantifier {m,n} with n < m")
                node, self.pos = ("rep", node, lo, hi), match.end()
            else:
                return node

    def atom(self) -> _Node:
        char = self.peek()
        if char == "(":
            self.pos += 1
            node = self.alternation()
            if self.peek() != ")":
                raise self.error("missing ')'")
            self.pos += 1
            return node
        if char is not None and char in _SYMBOLS:
            self.pos += 1
            return ("sym", _SYMBOLS[char])
        raise self.error(f"unexpected {char!r}; symbols are H, L, X")


# --------------------------------------------------------------------------- compiling
class _NFA:
    """Thompson NFA: ``eps[s]`` epsilon successors, ``edges[s]`` (symbol, target)."""

    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[int, int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def build(self, node: _Node) -> tuple[int, int]:
        """Return (start, end) states of a fragment accepting ``node``."""
        kind = node[0]
        if kind == "sym":
            start, end = self.state(), self.state()
            for symbol in node[1]:
                self.edges[start].append((symbol, end))
            return start, end
        if kind == "cat":
            start, end = self.build(node[1][0])
            for child in node[1][1:]:
                child_start, child_end = self.build(child)
                self.eps[end].append(child_start)
                end = child_end
            return start, end
        if kind == "alt":
            start, end = self.state(), self.state()
            for child in node[1]:
                child_start, child_end = self.build(child)
                self.eps[start].append(child_start)
                self.eps[child_end].append(end)
            return start, end
        _, child, lo, hi = node
        start = end = self.state()
        for _ in range(lo):  # mandatory copies
            child_start, child_end = self.build(child)
            self.eps[end].append(child_start)
            end = child_end
        if hi is None:  # Kleene star on one more copy
            child_start, child_end = self.build(child)
            self.eps[end].append(child_start)
            self.eps[child_end].append(end)
        else:  # optional copies, each may be skipped to the exit
            exit_ = self.state()
            self.eps[end].append(exit_)
            for _ in range(hi - lo):
                child_start, child_end = self.build(child)
                self.eps[end].append(child_start)
                self.eps[child_end].append(exit_)
                end = child_end
            end = exit_
        return start, end

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        stack = list(states)
        seen = set(stack)
        while stack:
            for nxt in self.eps[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)


def compile_pattern(pattern: str) -> tuple[np.ndarray, np.ndarray]:
    """Compile a weight pattern to a DFA.

    Returns ``(transitions, accepting)``: ``transitions[s, w]`` is the next state
    from state ``s`` on weight ``w`` (0 heavy, 1 light) or -1 when the string can
    no longer be accepted; state 0 is the start; ``accepting`` is a bool mask.
    Only states from which an accepting state is reachable are kept.
    """
    nfa = _NFA()
    start, final = nfa.build(_Parser(pattern).parse())
    first = nfa.closure([start])
    index = {first: 0}
    order = [first]
    table: list[list[int]] = []
    i = 0
    while i < len(order):
        current = order[i]
        row = []
        for symbol in range(len(WEIGHTS)):
            moved = {t for s in current for sym, t in nfa.edges[s] if sym == symbol}
            if not moved:
                row.append(-1)
                continue
            target = nfa.closure(moved)
            if target not in index:
                index[target] = len(order)
                order.append(target)
            row.append(index[target])
        table.append(row)
        i += 1
    trans = np.asarray(table, dtype=np.int64).reshape(len(order), len(WEIGHTS))
    accepting = np.array([final in s for s in order], dtype=bool)
    # prune states that cannot reach acceptance (keeps the Viterbi tables small)
    live = accepting.copy()
    while True:
        safe = np.where(trans >= 0, trans, 0)
        reach = live | ((trans >= 0) & live[safe]).any(axis=1)
        if (reach == live).all():
            break
        live = reach
    if not live[0]:
        raise ConfigError(f"metre pattern {pattern!r} accepts no string")
    new_id = np.cumsum(live) - 1
    trans = trans[live]
    safe = np.where(trans >= 0, trans, 0)
    trans = np.where((trans >= 0) & live[safe], new_id[safe], -1)
    return _minimise(trans, accepting[live])


def _minimise(trans: np.ndarray, accepting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Moore partition refinement; the start state stays 0."""
    classes = accepting.astype(np.int64)
    while True:
        nxt = np.where(trans >= 0, classes[np.where(trans >= 0, trans, 0)], -1)
        signature = np.column_stack([classes, nxt])
        _, refined = np.unique(signature, axis=0, return_inverse=True)
        refined = refined.reshape(-1)
        if len(np.unique(refined)) == len(np.unique(classes)):
            break
        classes = refined
    # renumber classes in order of first appearance so that state 0 keeps id 0
    _, first = np.unique(classes, return_index=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    ids = rank[classes]
    n_classes = len(order)
    reps = first[order]  # one representative state per class
    rep_trans = trans[reps]
    new_trans = np.where(rep_trans >= 0, ids[np.where(rep_trans >= 0, rep_trans, 0)], -1)
    return new_trans.reshape(n_classes, trans.shape[1]), accepting[reps]


# --------------------------------------------------------------------------- Meter
@dataclass(frozen=True, eq=False)
class Meter:
    """A metre: its name, weight pattern and compiled automaton."""

    name: str
    pattern: str
    description: str = ""
    examples: tuple[dict, ...] = ()
    negative_examples: tuple[dict, ...] = ()
    source: str = ""
    transitions: np.ndarray = field(init=False, repr=False)
    accepting: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        trans, accepting = compile_pattern(self.pattern)
        object.__setattr__(self, "transitions", trans)
        object.__setattr__(self, "accepting", accepting)

    @property
    def n_states(self) -> int:
        """Number of DFA states."""
        return int(self.transitions.shape[0])

    @property
    def regex(self) -> re.Pattern[str]:
        """The pattern as a Python regular expression over ``H``/``L`` strings."""
        return re.compile(re.sub(r"\s+", "", self.pattern).replace("X", "[HL]"))

    def accepts(self, weights: str) -> bool:
        """Whether a weight string such as ``"HLLHH..."`` scans in this metre."""
        state = 0
        for char in weights:
            if char not in "HL":
                raise ConfigError(f"weight strings use H and L only, got {char!r}")
            state = int(self.transitions[state, WEIGHTS.index(char)])
            if state < 0:
                return False
        return bool(self.accepting[state])

    def accepts_batch(self, weights: np.ndarray) -> np.ndarray:
        """Vectorised acceptance for an (N, n) int array of weights (0 heavy, 1 light)."""
        weights = np.asarray(weights, dtype=np.int64)
        state = np.zeros(weights.shape[0], dtype=np.int64)
        alive = np.ones(weights.shape[0], dtype=bool)
        for t in range(weights.shape[1]):  # loop over syllable positions, batch in numpy
            state = self.transitions[np.where(alive, state, 0), weights[:, t]]
            alive &= state >= 0
        return alive & self.accepting[np.where(alive, state, 0)]


def shipped_meter_dirs() -> list[Path]:
    """The shipped ``assets/meters`` folder (inside the package when installed from a
    wheel, else beside the package in a source checkout): what a scanner reads at
    ``initialize`` (and saves with itself)."""
    here = Path(__file__).resolve().parent.parent
    dirs = [
        p for p in (here / "assets" / "meters", here.parent / "assets" / "meters") if p.is_dir()
    ]
    return dirs[:1]


def meter_to_dict(meter: Meter) -> dict[str, Any]:
    """The JSON schema of ``assets/meters/README.md`` (inverse of :func:`meter_from_dict`)."""
    return {"name": meter.name, "pattern": meter.pattern, "description": meter.description,
            "examples": list(meter.examples), "negative_examples": list(meter.negative_examples)}


def default_meter_dirs(*extra: str | Path) -> list[Path]:
    """Folders searched by :func:`load_meters` when no paths are given (library use; a
    pipeline's scanner reads :func:`shipped_meter_dirs` once and saves its metres):
    :func:`shipped_meter_dirs`, then the ``extra`` folders given (no environment variable
    is read)."""
    return [*shipped_meter_dirs(), *(Path(p) for p in extra)]


def meter_from_dict(data: dict, source: str = "") -> Meter:
    """Build a :class:`Meter` from the JSON schema of ``assets/meters/README.md``."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ConfigError(f"metre file {source or '<dict>'}: needs a string 'name'")
    if not isinstance(data.get("pattern"), str):
        raise ConfigError(f"metre file {source or '<dict>'}: needs a string 'pattern'")
    return Meter(
        name=data["name"],
        pattern=data["pattern"],
        description=str(data.get("description", "")),
        examples=tuple(data.get("examples", ())),
        negative_examples=tuple(data.get("negative_examples", ())),
        source=source,
    )


def load_meters(paths: Iterable[str | os.PathLike[str]] | None = None) -> dict[str, Meter]:
    """Load metres from JSON files or folders of ``*.json`` files.

    ``paths=None`` loads :func:`default_meter_dirs`. Later files override earlier
    ones of the same name, so a user folder can replace a shipped metre.
    Raises :class:`~stoicheia_spacy.errors.ConfigError` on unreadable files,
    missing paths or bad patterns.
    """
    sources = default_meter_dirs() if paths is None else [Path(p) for p in paths]
    files: list[Path] = []
    for path in sources:
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise ConfigError(f"metre path {path} does not exist")
    meters: dict[str, Meter] = {}
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ConfigError(f"cannot read metre file {file}: {err}") from err
        meter = meter_from_dict(data, str(file))
        meters[meter.name] = meter
    return meters
