"""``python -m stoicheia_lab.bench roundtrip [--data MIRROR] [--baseline SRC] [--out JSON]``:
codec round trip on the UD Perseus and PROIEL test sentences.

A sentence round-trips when it holds only characters the planes represent
(:func:`~stoicheia_spacy.codec.unmodelled_offsets` is empty) and
``decode_planes(encode_planes(s)) == canonicalize(s)``, the spelling of the codec's
documented conventions (elision as U+2019, prodelision kept, ...).  The rate is over
*all* sentences; the failures are listed by class.  ``--baseline SRC`` (a checkout of
an earlier commit, e.g. ``git worktree add /tmp/base main``) runs that checkout's
encoder and decoder on the same sentences in a subprocess and scores them against the
current canonical spelling, so before and after come from one run.  The JSON also
scores decoding with elision left to the rule (``elision_by_rule``), as for planes a
model predicted.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

#: The UD test sets, relative to the open-data mirror (``STOICHEIA_ASSET_MIRROR``).
UD_TEST_SETS: tuple[str, ...] = (
    "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
    "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz",
)
_BRACKETS = set("()[]{}⟨⟩<>")

# Run in the baseline checkout: read sentences (JSON list) on stdin, print
# [[decoded, unmodelled characters], ...] as JSON.
_BASELINE_SCRIPT = """
import json, sys
from stoicheia_spacy.codec import decode_planes, encode_detailed
out = []
for s in json.load(sys.stdin):
    enc = encode_detailed(s, unmodelled=True)
    out.append([decode_planes(enc.planes), [s[i] for i in enc.unmodelled.tolist()]])
json.dump(out, sys.stdout)
"""


def ud_texts(path: Path) -> list[str]:
    """The ``# text`` of every sentence of a CoNLL-U file (plain or ``.xz``)."""
    import conllu

    opener: Any = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [tokens.metadata.get("text", "") for tokens in conllu.parse_incr(handle)]


def unmodelled_class(chars: list[str]) -> str:
    """A name for the kinds of characters the planes do not represent."""
    kinds = set()
    for ch in chars:
        if ch in _BRACKETS:
            kinds.add("brackets")
        elif unicodedata.category(ch).startswith("M"):
            kinds.add("combining mark on no letter")
        elif unicodedata.category(ch).startswith("P"):
            kinds.add("repeated punctuation (ellipsis, ',.')")
        else:
            kinds.add("character outside the planes")
    return "unmodelled: " + " + ".join(sorted(kinds))


def current_decoded(sentences: list[str], *, rule: bool = False) -> list[tuple[str, list[str]]]:
    """(decoded text, unmodelled characters) of every sentence with this checkout's codec;
    ``rule=True`` drops the recorded elision, as for planes a model predicted."""
    from stoicheia_spacy.codec import decode_planes, encode_detailed

    out = []
    for s in sentences:
        enc = encode_detailed(s, unmodelled=True)
        assert enc.unmodelled is not None
        if rule:
            enc.planes.elided = None
        out.append((decode_planes(enc.planes), [s[i] for i in enc.unmodelled.tolist()]))
    return out


def baseline_decoded(source: Path, sentences: list[str]) -> list[tuple[str, list[str]]]:
    """(decoded text, unmodelled characters) with the codec of another checkout."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    run = subprocess.run([sys.executable, "-c", _BASELINE_SCRIPT], input=json.dumps(sentences), env=env,
                         capture_output=True, text=True, check=True, cwd=source)
    return [(d, n) for d, n in json.loads(run.stdout)]


def _fold(text: str, *, marks: bool) -> str:
    """``text`` without elision marks, σ/ς merged, and (``marks=True``) without combining marks."""
    from stoicheia_spacy.codec import ELISION

    text = text.replace(ELISION, "").replace("ς", "σ")
    if marks:
        text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return text


def score(sentences: list[str], decoded: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """Round-trip rate over all sentences and the failures by class."""
    from stoicheia_spacy.codec import canonicalize

    failures: dict[str, list[str]] = {}
    for s, (out, unmodelled) in zip(sentences, decoded, strict=True):
        canonical = canonicalize(s)
        if unmodelled:
            kind = unmodelled_class(unmodelled)
        elif out != canonical:
            if _fold(out, marks=False) == _fold(canonical, marks=False):
                kind = "elision mark differs"
            elif _fold(out, marks=True) == _fold(canonical, marks=True):
                kind = "diacritics and elision differ (e.g. a breathing for an elision mark)"
            else:
                kind = "text differs"
        else:
            continue
        failures.setdefault(kind, []).append(s)
    n_failed = sum(len(v) for v in failures.values())
    return {
        "n": len(sentences),
        "round_trip": len(sentences) - n_failed,
        "rate": (len(sentences) - n_failed) / max(len(sentences), 1),
        "failures_by_class": dict(Counter({k: len(v) for k, v in failures.items()}).most_common()),
        "failures": failures,
    }


def _git_rev(path: Path) -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=path, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _dirty() -> bool:
    try:
        return bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                   cwd=Path(__file__).resolve().parent, capture_output=True, text=True,
                                   check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        return False


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench roundtrip")
    mirror = os.environ.get("STOICHEIA_ASSET_MIRROR")
    parser.add_argument("--data", type=Path, default=Path(mirror) if mirror else None, required=not mirror,
                        help="open-data mirror holding the UD test sets (default: $STOICHEIA_ASSET_MIRROR)")
    parser.add_argument("--baseline", type=Path, default=None, help="checkout of an earlier commit to compare")
    parser.add_argument("--baseline-name", default=None, help="what --baseline is (default: its git HEAD)")
    parser.add_argument("--out", type=Path, default=None, help="write the metrics JSON here")
    args = parser.parse_args(argv)

    per_set: dict[str, list[str]] = {Path(rel).name: ud_texts(args.data / rel) for rel in UD_TEST_SETS}
    sentences = [s for texts in per_set.values() for s in texts]
    result: dict[str, Any] = {
        "command": "python -m stoicheia_lab.bench roundtrip " + " ".join(argv),
        "definition": "s round-trips when unmodelled_offsets(s) is empty and "
                      "decode_planes(encode_planes(s)) == canonicalize(s); rate over all sentences",
        "commit": _git_rev(Path(__file__).resolve().parent) + (" + uncommitted" if _dirty() else ""),
        "sets": {name: {k: v for k, v in score(texts, current_decoded(texts)).items() if k != "failures"}
                 for name, texts in per_set.items()},
        "all": score(sentences, current_decoded(sentences)),
    }
    rule = score(sentences, current_decoded(sentences, rule=True))
    result["elision_by_rule"] = {k: v for k, v in rule.items() if k != "failures"}
    print(f"after  ({result['commit']}): {result['all']['round_trip']}/{len(sentences)} "
          f"= {result['all']['rate']:.2%}  {result['all']['failures_by_class']}")
    print(f"after, elision left to the rule: {rule['rate']:.2%}  {rule['failures_by_class']}")
    if args.baseline is not None:
        base = score(sentences, baseline_decoded(args.baseline, sentences))
        base["commit"] = args.baseline_name or _git_rev(args.baseline)
        result["baseline"] = base
        print(f"before ({base['commit']}): {base['round_trip']}/{len(sentences)} = {base['rate']:.2%}  "
              f"{base['failures_by_class']}")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
