from __future__ import annotations

import pytest

from stoicheia_spacy.errors import InvalidInputError
from stoicheia_spacy.morph.lemma_scripts import (
    EditScript,
    apply_script,
    build_script_vocab,
    derive_script,
)


@pytest.mark.parametrize(
    ("form", "lemma", "script"),
    [
        ("λόγος", "λόγος", [0, "", 0, "", 0]),
        ("ἄνδρες", "ἀνήρ", [1, "ἀ", 4, "ήρ", 0]),  # common substring "ν"
        ("Ἀθηναίων", "Ἀθηναῖος", [0, "", 3, "ῖος", 1]),
        ("Ὅτι", "ὅτι", [0, "", 0, "", 0]),
        ("εἶπον", "λέγω", [0, "", 5, "λέγω", 0]),
        ("ἐποίησεν", "ποιέω", [1, "", 5, "ιέω", 0]),  # augment cut
        ("ᾠδῆς", "ᾠδή", [0, "", 2, "ή", 0]),
    ],
)
def test_derive_and_apply(form: str, lemma: str, script: list[int | str]) -> None:
    derived = derive_script(form, lemma)
    assert derived.to_list() == script
    assert apply_script(form, derived) == lemma
    assert apply_script(form, script) == lemma


def test_title_case_does_not_expand_iota_subscript() -> None:
    script = derive_script("ᾅδου", "ᾍδης")
    assert script.cap == 1 and apply_script("ᾅδου", script) == "ᾍδης"
    allcaps = derive_script("ΝΙΚΗ", "ΝΙΚΗ")
    assert allcaps.cap == 2 and apply_script("ΝΙΚΗ", allcaps) == "ΝΙΚΗ"


def test_short_form_fallback_and_validation() -> None:
    script = EditScript(0, "", 6, "έω", 0)
    assert apply_script("ἦν", script) == "ἦν"
    with pytest.raises(InvalidInputError):
        apply_script("ἦν", script, strict=True)
    for bad in ([0, "", 1], [0, "", -1, "", 0], [0, "", 1, "", 7], ["0", "", 1, "", 0]):
        with pytest.raises(InvalidInputError):
            EditScript.from_list(bad)  # type: ignore[arg-type]


def test_roundtrip_on_real_pairs(harmonised_samples) -> None:
    pairs = [
        (f, lem)
        for sents in harmonised_samples.values()
        for s in sents
        for f, lem in zip(s.forms, s.lemmas, strict=True)
    ]
    exact = sum(apply_script(f, derive_script(f, lem)) == lem for f, lem in pairs)
    vocab = build_script_vocab(pairs)
    print(f"pairs {len(pairs)}, exact {exact / len(pairs):.5f}, scripts {len(vocab)}")
    assert exact / len(pairs) >= 0.999
    assert vocab[0].to_list() == [0, "", 0, "", 0]  # identity is the commonest script
    assert len(build_script_vocab(pairs, min_count=2)) < len(vocab)
