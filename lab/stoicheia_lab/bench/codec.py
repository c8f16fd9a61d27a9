"""``python -m stoicheia_lab.bench codec [--mb N] [--text FILE]``: codec throughput.

Encodes and decodes at least ``--mb`` megabytes (UTF-8) of real Greek, built by
repeating ``--text`` (default: the 200 UD sentences shipped with the tests, or a
built-in passage when they are absent), and prints MB/s for encode, decode and
canonicalize, each also as a ratio to ``unicodedata.normalize('NFD', text)``
measured in the same run.
"""

from __future__ import annotations

import argparse
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from stoicheia_spacy.codec import canonicalize, decode_planes, encode_planes

_PASSAGE = (
    "ζῶσι δὲ καὶ οὗτοι τὸν αὐτὸν τρόπον τοῖς θρεψαμένοις, πότους τὰ πολλὰ ποιούμενοι καὶ "
    "πλησιάζοντες ταῖς γυναιξὶν ἁπάσαις. οὐδὲν δ’ αἰσχρόν ἐστι Τυρρηνοῖς οὐ μόνον αὐτοὺς "
    "ἐν τῷ μέσῳ τι ποιοῦντας, ἀλλ’ οὐδὲ πάσχοντας φαίνεσθαι· ἐπιχώριον γὰρ καὶ τοῦτο παρ’ "
    "αὐτοῖς ἐστι."
)


def _default_text() -> str:
    fixture = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "ud_sentences_200.txt"
    if fixture.is_file():
        return " ".join(fixture.read_text(encoding="utf-8").split("\n")).strip()
    return _PASSAGE


def _best_seconds(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench codec")
    parser.add_argument("--mb", type=float, default=10.0, help="megabytes of UTF-8 text to encode")
    parser.add_argument("--text", type=Path, default=None, help="UTF-8 file of Greek text to repeat")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per operation (best is kept)")
    args = parser.parse_args(argv)

    unit = args.text.read_text(encoding="utf-8") if args.text else _default_text()
    unit = unit.strip() + " "
    copies = max(1, int(args.mb * 1e6 / len(unit.encode("utf-8"))) + 1)
    text = unit * copies
    mb = len(text.encode("utf-8")) / 1e6
    encode_planes("λόγος")  # build the lookup tables outside the timings
    decode_planes(encode_planes("λόγος"))

    planes = encode_planes(text)
    rendered = decode_planes(planes)
    out_mb = len(rendered.encode("utf-8")) / 1e6
    t_nfd = _best_seconds(lambda: unicodedata.normalize("NFD", text), args.repeat)
    t_enc = _best_seconds(lambda: encode_planes(text), args.repeat)
    t_dec = _best_seconds(lambda: decode_planes(planes), args.repeat)
    t_can = _best_seconds(lambda: canonicalize(text), 1)

    print(f"text: {mb:.1f} MB UTF-8, {len(text):,} characters, {len(planes):,} letters")
    print(f"baseline unicodedata NFD : {mb / t_nfd:8.1f} MB/s")
    print(f"encode_planes            : {mb / t_enc:8.1f} MB/s  ({t_nfd / t_enc:.2f}x NFD)")
    print(f"decode_planes            : {out_mb / t_dec:8.1f} MB/s  ({(out_mb / t_dec) / (mb / t_nfd):.2f}x NFD)")
    print(f"canonicalize             : {mb / t_can:8.1f} MB/s  ({t_nfd / t_can:.2f}x NFD)")
    return 0
