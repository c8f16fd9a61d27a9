"""Fixtures for the pretraining tests: a small real Greek corpus and the codec encoder
(a minimal stand-in only while ``stoicheia_spacy.codec`` is absent)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stoicheia_spacy import alphabet as A

DATA = Path(__file__).resolve().parent / "data"

_FOLD = {"ς": "σ", "ϲ": "σ"}


@dataclass
class _Planes:
    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray

    def __len__(self) -> int:
        return int(self.letters.shape[0])

    def __getitem__(self, s: slice) -> _Planes:
        return _Planes(*(getattr(self, n)[s] for n in ("letters", "boundary", "diacritics", "capitals", "punctuation")))


def _standin_encode(text: str) -> _Planes:
    letters: list[int] = []
    caps: list[int] = []
    bnd: list[int] = []
    for ch in unicodedata.normalize("NFD", text):
        low = _FOLD.get(ch.lower(), ch.lower())
        if low in A.ALPHABET:
            letters.append(A.ALPHABET.index(low))
            caps.append(int(ch != ch.lower()))
            bnd.append(A.BND_INTERNAL)
        elif ch.isspace() and bnd:
            bnd[-1] = A.BND_WORD_END
    if bnd:
        bnd[-1] = A.BND_SENT_END
    n = len(letters)
    u8 = np.uint8
    return _Planes(np.array(letters, u8), np.array(bnd, u8), np.zeros(n, u8), np.array(caps, u8), np.zeros(n, u8))


@pytest.fixture(scope="session")
def corpus() -> Path:
    return DATA / "agamemnon_small.jsonl"


@pytest.fixture(scope="session")
def encoder() -> Any:
    try:
        from stoicheia_spacy.codec import encode_planes
    except ImportError:
        return _standin_encode
    return encode_planes
