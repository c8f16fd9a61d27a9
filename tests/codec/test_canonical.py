"""canonicalize: the canonical spelling, independent of encode/decode."""

from __future__ import annotations

import pytest

from stoicheia_spacy.codec import canonicalize
from stoicheia_spacy.errors import InvalidTextError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u1f71\u03bd\u03b8\u03c1\u03c9\u03c0\u03bf\u03c2", "\u03ac\u03bd\u03b8\u03c1\u03c9\u03c0\u03bf\u03c2"),
        ("ϲοφόϲ  Ϲωκράτηϲ", "σοφός Σωκράτης"),
        ("λόγοσ καὶ λόγος", "λόγος καὶ λόγος"),
        ("ἀλλ' οὐδὲ δ\u0313 αὐτός", "ἀλλ’ οὐδὲ δ’ αὐτός"),
        ("παῤ αὐτοῖς ἄῤῥητα", "παρ’ αὐτοῖς ἄῤῥητα"),
        ("θάλασς’ ἐστί", "θάλασσ’ ἐστί"),
        ("τί\u037e φεῦ! ἔφη\u0387 ναί ?", "τί; φεῦ; ἔφη· ναί;"),
        ("λόγος ,καί .", "λόγος, καί."),
        ("ι\u0301\u0308 α\u0301\u0313\u0345", "ΐ ᾄ"),
        # U+0313 after the accent of a final vowel is an elision mark (UD Perseus: δύ̓, Δί̓, οἷ̓) ...
        ("δύ\u0313 ἢ τρεῖς, νὴ Δί\u0313 ἐγένου", "δύ’ ἢ τρεῖς, νὴ Δί’ ἐγένου"),
        ("οἷ\u0313 ἀνέπεμψεν, δῖ\u0313 Ἀφροδίτα", "οἷ’ ἀνέπεμψεν, δῖ’ Ἀφροδίτα"),
        # ... but a breathing when a letter follows or when written before the accent
        ("ύ\u0313λόγος υ\u0313\u0301 λόγος", "ὔλόγος ὔ λόγος"),
        # prodelision keeps its mark, as U+2019 before the word
        ("οὐ σύμφορον νέα \u0313στὶ", "οὐ σύμφορον νέα ’στὶ"),
        ("θύρα \u0313στ\u0313 ἀνεῳγμένη", "θύρα ’στ’ ἀνεῳγμένη"),
        ("\u0313στι, μὴ 'ξαπατηθῇς", "’στι, μὴ ’ξαπατηθῇς"),
        ("ᾱ̓ γαθός", "ἀ γαθός"),
        ("κα\u0343γώ", "κἀγώ"),
        ("λό[γο]ς 12 ϝάναξ (sic)", "λό[γο]ς 12 ϝάναξ (sic)"),
        ("λό[σ]ος λόγο[σ]", "λό[σ]ος λόγο[ς]"),
        ("", ""),
    ],
)
def test_canonical_forms(text: str, expected: str) -> None:
    assert canonicalize(text) == expected


def test_never_nfkc() -> None:
    # NFKC would turn the spacing koronis/psili into space + combining mark
    assert canonicalize("τοὔνομα κἀγώ \u1fbd") == "τοὔνομα κἀγώ ’"


def test_bad_input() -> None:
    with pytest.raises(InvalidTextError):
        canonicalize(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidTextError, match="offset 1"):
        canonicalize("α\x00")
