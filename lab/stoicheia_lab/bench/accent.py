"""``python -m stoicheia_lab.bench accent [--lexicon FILE] [--letters N]``: lattice decoding speed.

Decodes unaccented *scriptio continua* (the 200 UD sentences shipped with the tests,
stripped and repeated) of N and 4N letters with :func:`stoicheia_spacy.accent.lattice.decode_lattice`
(random log-probabilities of the right shapes stand in for the backbone; the lexicon is
``--lexicon``, the installed one, or a lexicon of the text's own forms) and prints
letters/s and the time ratio t(4N)/t(N) (4.0 = linear), next to the per-letter decode of
:func:`stoicheia_spacy.accent.predict.decode_heads` on the same input, measured in the same run.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from stoicheia_spacy.accent.formlex import FormLexicon
from stoicheia_spacy.accent.lattice import decode_lattice
from stoicheia_spacy.accent.lexasset import load_lexicon
from stoicheia_spacy.accent.predict import PlaneControl, decode_heads, model_inputs, strip_planes
from stoicheia_spacy.codec import encode_planes

_FIXTURE = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "ud_sentences_200.txt"
_PASSAGE = "ζῶσι δὲ καὶ οὗτοι τὸν αὐτὸν τρόπον τοῖς θρεψαμένοις, πότους τὰ πολλὰ ποιούμενοι."


def _logp(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    def lsm(shape: tuple[int, int]) -> np.ndarray:
        x = rng.normal(size=shape)
        return x - np.log(np.exp(x).sum(1, keepdims=True))

    return {"boundary": lsm((n, 3)), "dia": lsm((n, 48)), "cap": lsm((n, 2)), "punct": lsm((n, 6))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m stoicheia_lab.bench accent")
    ap.add_argument("--lexicon", default=None, help="a formlex .npz (default: installed, else the text's forms)")
    ap.add_argument("--letters", type=int, default=4000)
    a = ap.parse_args(argv)
    text = _FIXTURE.read_text(encoding="utf-8") if _FIXTURE.is_file() else _PASSAGE
    lexicon = load_lexicon(a.lexicon) if a.lexicon else load_lexicon()
    if lexicon is None:
        lexicon = FormLexicon.from_forms((w, 1) for w in text.split())
    gold = encode_planes(text.replace("\n", " "))
    rng = np.random.default_rng(0)
    control = PlaneControl(boundary="predict", diacritics="predict", punctuation="predict")
    times: dict[str, list[float]] = {"lattice": [], "per-letter": []}
    sizes = (a.letters, 4 * a.letters)
    for n in sizes:
        reps = -(-n // len(gold))
        letters = np.tile(gold.letters, reps)[:n]
        logp = _logp(n, rng)
        t0 = time.perf_counter()
        decode_lattice(letters, logp, lexicon)
        times["lattice"].append(time.perf_counter() - t0)
        bare = strip_planes(encode_planes(" ".join([text.replace("\n", " ")] * reps)))[:n]
        inputs, fixed = model_inputs(bare, control)
        t0 = time.perf_counter()
        decode_heads(bare, inputs, fixed, logp, control, lexicon=None)
        times["per-letter"].append(time.perf_counter() - t0)
    for name, (t1, t4) in times.items():
        print(f"{name:>10}: {sizes[0] / t1:10.0f} letters/s at {sizes[0]}, {sizes[1] / t4:10.0f} at {sizes[1]}; "
              f"t(4N)/t(N) = {t4 / t1:.2f} (4.00 = linear)")
    print(f"lattice / per-letter time at {sizes[1]} letters: {times['lattice'][1] / times['per-letter'][1]:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
