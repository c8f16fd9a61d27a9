"""A minimal stand-in for ``stoicheia_spacy.codec`` used only while the real codec is absent."""

from __future__ import annotations

import sys
import types
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from stoicheia_spacy import alphabet as A

_FOLD = {"ς": "σ", "ϲ": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϰ": "κ", "ϱ": "ρ", "ϖ": "π"}


@dataclass
class CharPlanes:
    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __len__(self) -> int:
        return int(self.letters.shape[0])


def encode_planes(text: str) -> CharPlanes:
    letters, bnd, dia, cap, punct, offs = [], [], [], [], [], []
    for i, ch in enumerate(text):
        base = unicodedata.normalize("NFD", ch)[0]
        low = _FOLD.get(base.lower(), base.lower())
        if low in A.ALPHABET:
            letters.append(A.ALPHABET.index(low))
            bnd.append(A.BND_INTERNAL)
            dia.append(0)
            cap.append(int(base != base.lower()))
            punct.append(A.PUNCT_NONE)
            offs.append(i)
        elif letters and ch.isspace():
            bnd[-1] = A.BND_WORD_END
        elif letters and ch in ",.;·":
            punct[-1] = {",": 1, "·": 2, ".": 4, ";": 5}[ch]
    if bnd:
        bnd[-1] = A.BND_SENT_END
    u8 = lambda x: np.asarray(x, np.uint8)  # noqa: E731
    return CharPlanes(u8(letters), u8(bnd), u8(dia), u8(cap), u8(punct), np.asarray(offs, np.int64))


def install() -> None:
    """Register this module as ``stoicheia_spacy.codec`` unless the real one exists."""
    try:
        from stoicheia_spacy.codec import encode_planes as _real  # noqa: F401
    except ImportError:
        mod = types.ModuleType("stoicheia_spacy.codec")
        mod.CharPlanes = CharPlanes  # type: ignore[attr-defined]
        mod.encode_planes = encode_planes  # type: ignore[attr-defined]
        sys.modules["stoicheia_spacy.codec"] = mod
