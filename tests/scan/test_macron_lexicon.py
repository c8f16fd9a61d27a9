"""Macron lexicon (keys, markup/Unicode patterns, asset round trip) and the lexicon-aware decoder."""

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CorpusError
from stoicheia_spacy.scan.macron_decoder import (
    MacronDecoder,
    fit_logistic,
    lexicon_votes,
    posterior_features,
)
from stoicheia_spacy.scan.macron_lexicon import (
    SOURCES,
    MacronLexicon,
    build_macron_lexicon,
    form_key,
    from_markup,
    from_unicode,
)
from stoicheia_spacy.scan.syllabify import dichrona_mask


def test_keys_fold_case_grave_and_final_sigma() -> None:
    assert form_key("Ἀλλὰ") == form_key("ἀλλά") == "ἀλλά"
    assert form_key("λόγος,") == "λόγοσ"


def test_markup_and_unicode_give_one_pattern_character_per_letter() -> None:
    assert from_markup("ἄ^κροισι^") == ("ἄκροισι", "0.....0")
    key, pattern = from_markup("συστείλα_ς")
    assert key == "συστείλασ" and pattern[7] == "1" and pattern.count("1") == 1
    assert from_unicode("ᾰ̓́κρος") == ("ἄκροσ", "0....")
    assert from_unicode("Ἀθηνᾶ ātē") is None  # Latin transliteration is not a Greek form


def test_asset_round_trip_keeps_patterns_sources_and_licence(tmp_path) -> None:
    lex = MacronLexicon()
    lex.add("καλόσ", ".0...", SOURCES["lsj"])
    lex.add("καλόσ", ".1...", SOURCES["wiktionary"])
    lex.add("καλόσ", ".0...", SOURCES["hypotactic"])
    lex.to_disk(tmp_path / "lex.json.gz")
    back = MacronLexicon.from_disk(tmp_path / "lex.json.gz")
    assert [tuple(c) for c in back.candidates("Καλός")] == [(".0...", 3, 2), (".1...", 4, 1)]
    assert "GPL-3.0" in back.meta["licence"]
    back.add(*from_markup("ἄ^λγεα^"), SOURCES["hypotactic"])
    assert back.candidates("ἄλγεά") == back.candidates("ἄλγεα") == [["0...0", 1, 1]]  # enclitic accent
    back.corpus = {"θεά": [2, 7, 0]}  # the corpus count table travels with the asset, licence recorded
    back.to_disk(tmp_path / "lex2.json.gz")
    again = MacronLexicon.from_disk(tmp_path / "lex2.json.gz")
    assert again.corpus == {"θεά": [2, 7, 0]} and "corpus" not in again.meta
    assert "CC BY 4.0" in again.meta["licence"] and "scanned verse" in again.meta["licence"]
    assert again.corpus_counts("θεὰ", 2) == (7, 0) and again.corpus_counts("θεά", 1) == (0, 0)
    assert again.corpus_counts("θεάν", 2) == (0, 0)
    (tmp_path / "bad.json.gz").write_bytes(__import__("gzip").compress(b'{"format": "x"}'))
    with pytest.raises(CorpusError):
        MacronLexicon.from_disk(tmp_path / "bad.json.gz")


def test_votes_land_on_the_dichronon_of_the_word() -> None:
    lex = MacronLexicon()
    lex.add(*from_markup("θεά_"), SOURCES["hypotactic"])
    lex.add(*from_markup("ἄ^κροισι^"), SOURCES["wiktionary"])
    text = "εἰπέ, θεά, ἄκροισι"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    v = lexicon_votes(text, planes, dich, lex)
    offs = np.asarray(planes.offsets)
    at = {text[o]: v[i] for i, o in enumerate(offs.tolist()) if dich[i]}
    # θεά: Hypotactic says long, at a word-final vowel (its own column, 6)
    assert at["ά"].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    assert at["ἄ"].tolist()[:4] == [0.0, 0.0, -1.0, 1.0]  # ἄκροισι: Wiktionary says short
    assert lexicon_votes(text, planes, dich, None).sum() == 0


def test_unseen_words_get_suffix_votes_and_the_doric_long_alpha() -> None:
    lex = MacronLexicon()
    for form in ("πολί_της", "ὁπλί_της", "ἱππό^τα_ς", "δεσπό^τα_ς"):
        lex.add(*from_markup(form), SOURCES["lsj"])
    lex.build_suffixes(min_count=1)
    assert lex.suffix_vote("ἀμπελίτης", 5, min_count=2) == (1.0, 2)  # -λί_της like πολί_της, ὁπλί_της
    assert lex.suffix_vote("ἀμπελίτης", 5, min_count=3) == (0.0, 0)
    lex.eta_forms = {form_key("στρατηγέ")}
    assert lex.eta_variant_attested("στραταγέ", 5) and not lex.eta_variant_attested("στραταγέ", 3)
    text = "ὦ στραταγέ"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    v = lexicon_votes(text, planes, dich, lex)
    flagged = [text[o] for i, o in enumerate(np.asarray(planes.offsets).tolist()) if v[i, 5] == 1.0]
    assert flagged == ["α"]  # στρατ-α-γέ: the α where Attic has η


def test_logistic_stage_learns_to_trust_the_metre_and_is_calibrated() -> None:
    rng = np.random.default_rng(0)
    y = rng.random(4000) < 0.3
    metre = np.where(rng.random(4000) < 0.5, np.where(y, 1, -1), 0)
    p_prior = np.clip(np.where(y, 0.6, 0.3) + rng.normal(0, 0.15, 4000), 0.01, 0.99)
    params = fit_logistic(posterior_features(p_prior, metre), y)
    assert params["weights"][1] > 1.0
    dec = MacronDecoder(None, {"backbone": {"posterior": params}})
    p = dec.posterior(p_prior, metre, np.ones(4000, dtype=bool))
    assert ((p > 0.5) == y).mean() > 0.9
    assert abs(p.mean() - y.mean()) < 0.02  # calibrated in the large
    # without fitted stages the metre simply decides, as the scanner always did
    raw = MacronDecoder(None, {}).posterior(np.array([0.2, 0.9, 0.4]), np.array([1, -1, 0]), np.ones(3, dtype=bool))
    assert (raw > 0.5).tolist() == [True, False, False]


def test_built_lexicon_from_the_mirror_knows_common_forms(shared_data) -> None:
    from stoicheia_lab.scan.silver import leaked_forms

    leaked = leaked_forms(shared_data)
    assert "Πενθεσίλεια" in leaked and "θεά" not in leaked
    lex = build_macron_lexicon(shared_data / "lexica" / "grc_macronizer_db", drop_hypotactic=leaked)
    assert len(lex) > 400_000 and lex.meta["hypotactic_dropped"] > 0
    assert any(p == "..1" for p, _, _ in lex.candidates("θεά"))
    assert any(p[0] == "0" for p, _, _ in lex.candidates("ἄκροισι"))
