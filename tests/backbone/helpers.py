"""Shared helpers of the backbone tests: real Greek inputs as plane tensors."""

from __future__ import annotations

import unicodedata
from typing import Any

import torch

from stoicheia_spacy import alphabet

ILIAD_1 = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε"
ODYSSEY_1 = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη"

_FOLD = {"ς": "σ", "ϲ": "σ"}


def greek_letter_ids(text: str) -> list[int]:
    """Letter ids of the Greek letters in ``text`` (diacritics dropped, sigma folded)."""
    ids = []
    for ch in unicodedata.normalize("NFD", text.lower()):
        ch = _FOLD.get(ch, ch)
        if ch in alphabet.ALPHABET:
            ids.append(alphabet.ALPHABET.index(ch))
    return ids


def greek_inputs(text: str, *, seed: int = 0) -> dict[str, Any]:
    """(1, T) plane tensors for ``text``: real letters, word ends from spaces, random diacritics."""
    ids = greek_letter_ids(text)
    bnd = []
    words = [w for w in text.split() if greek_letter_ids(w)]
    for w in words:
        n = len(greek_letter_ids(w))
        bnd += [alphabet.BND_INTERNAL] * (n - 1) + [alphabet.BND_WORD_END]
    bnd[-1] = alphabet.BND_SENT_END
    g = torch.Generator().manual_seed(seed)
    T = len(ids)
    return {
        "input_ids": torch.tensor([ids]),
        "boundary": torch.tensor([bnd]),
        "dia": torch.randint(0, alphabet.N_DIA, (1, T), generator=g),
        "punct": torch.randint(0, alphabet.N_PUNCT, (1, T), generator=g),
    }


def random_inputs(B: int, T: int, *, seed: int = 0) -> dict[str, Any]:
    """Random plane ids of shape (B, T)."""
    g = torch.Generator().manual_seed(seed)
    return {
        "input_ids": torch.randint(0, alphabet.N_CHAR_IDS - 1, (B, T), generator=g),
        "boundary": torch.randint(0, alphabet.N_BOUNDARY, (B, T), generator=g),
        "dia": torch.randint(0, alphabet.N_DIA, (B, T), generator=g),
        "punct": torch.randint(0, alphabet.N_PUNCT, (B, T), generator=g),
    }
