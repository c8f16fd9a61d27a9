"""The macron decoder's stages: position features, metre margins, dialect cues, corpus counts, old cfgs."""

import json
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.macron_decoder import (
    MARGIN_CAP,
    POSTERIOR_FEATURES,
    POSTERIOR_GROUPS,
    PRIOR_FEATURES,
    PRIOR_GROUPS,
    MacronDecoder,
    corpus_votes,
    deictic_iota,
    dialect_features,
    position_features,
    posterior_features,
    prior_features,
)
from stoicheia_spacy.scan.macron_lexicon import (
    SOURCES,
    MacronLexicon,
    form_key,
    from_markup,
    read_eta_forms,
)
from stoicheia_spacy.scan.syllabify import dichrona_mask

TEXT = "μυρία ἄλγε θεά"


def _letters(text: str) -> list[str]:
    planes = encode_planes(text)
    return [text[int(o)] for o in np.asarray(planes.offsets)]


def test_position_features_on_real_words() -> None:
    planes = encode_planes(TEXT)
    feats = position_features(planes)
    letters = _letters(TEXT)
    assert feats.shape == (len(letters), 5)
    vowel = [unicodedata.normalize("NFD", c)[0] in "αεηιουω" for c in letters]
    on = {name: [letters[i] for i in np.nonzero(feats[:, j])[0] if vowel[i]]
          for j, name in enumerate(("alpha", "iota", "last", "first", "next_vowel"))}
    assert on["alpha"] == ["α", "ἄ", "ά"]
    assert on["iota"] == ["ί"]
    assert on["last"] == ["α", "ε", "ά"]  # μυρί-α, ἄλγ-ε, θε-ά
    assert on["first"] == ["υ", "ἄ", "ε"]
    assert on["next_vowel"] == ["ί", "ε"]  # ί before α, ε before ά; never across a word end
    assert position_features(encode_planes("")).shape == (0, 5)


def test_old_two_weight_posterior_ignores_the_new_evidence() -> None:
    planes = encode_planes(TEXT)
    dich = dichrona_mask(planes)
    p = np.full(len(planes), 0.3)
    metre = np.where(dich, 1, 0)
    old = MacronDecoder(None, {"backbone": {"posterior": {"weights": [1.0, 2.0], "bias": 0.0}}})
    expected = 1 / (1 + np.exp(-(np.log(0.3 / 0.7) + 2.0)))
    plain = old.posterior(p, metre, dich)
    full = old.posterior(p, metre, dich, margin=np.full(len(p), MARGIN_CAP), planes=planes,
                         verse_metre=np.ones(len(p)))
    assert plain[dich] == pytest.approx(expected) and full[dich] == pytest.approx(expected)
    assert np.array_equal(plain[~dich], p[~dich])


def test_a_forced_metre_weighs_more_than_a_loose_one() -> None:
    planes = encode_planes(TEXT)
    dich = dichrona_mask(planes)
    n = len(planes)
    forced = POSTERIOR_FEATURES.index("metre_forced")
    stage = {"weights": [1.0, 0.5, 3.0], "bias": 0.0, "features": [0, 1, forced]}
    dec = MacronDecoder(None, {"backbone": {"posterior": stage}})
    p, metre = np.full(n, 0.3), np.where(dich, 1, 0)
    loose = dec.posterior(p, metre, dich, margin=np.full(n, 1.5))
    held = dec.posterior(p, metre, dich, margin=np.full(n, 50.0))  # capped: the metre forced it
    assert (held[dich] > 0.9).all() and (loose[dich] < 0.5).all()
    x = posterior_features(p, metre, np.full(n, 50.0))
    assert x.shape == (n, len(POSTERIOR_FEATURES)) and x[dich, forced].tolist() == [1.0] * int(dich.sum())


def _dialect_lexicon() -> MacronLexicon:
    lex = MacronLexicon()
    # Attic-Ionic η-forms: νικήσας, ἀνίκητον, στήσειεν; Ionic χώρη; πάντη (adverb) beside neuter πάντα;
    # the augmented ἤκουσα beside ἄκουσα
    lex.eta_forms = {form_key(w) for w in ("νικήσας", "ἀνίκητον", "στήσειεν", "χώρη", "πάντη", "ἤκουσα", "τλήμων")}
    lex.add(*from_markup("πάντα^"), SOURCES["wiktionary"])
    lex.add(*from_markup("τλά_μων"), SOURCES["lsj"])  # a form an Attic source lists
    return lex


def test_dialect_features_mark_the_doric_long_alpha_and_alpha_purum() -> None:
    text = "νικάσας ἀνίκατον χώρα πάντα ἄκουσα στάσειεν τλάμων"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    feats = dialect_features(text, planes, dich, _dialect_lexicon())
    offs = np.asarray(planes.offsets).tolist()

    def marked(col: int) -> list[str]:
        return [f"{text[o]}@{m.group()}" for m in re.finditer(r"\S+", text) for i, o in enumerate(offs)
                if m.start() <= o < m.end() and feats[i, col] == 1.0]

    # νικ-ά-σας, ἀνίκ-α-τον, στ-ά-σειεν: Doric ᾱ for Attic η (first letter, last vowel, listed forms left out)
    assert marked(1) == ["ά@νικάσας", "α@ἀνίκατον", "ά@στάσειεν"]
    assert marked(0) == ["α@χώρα"]  # Attic ᾱ after ρ where Ionic has η
    assert dialect_features(text, planes, dich, None).sum() == 0


def test_a_dialect_stage_lengthens_the_doric_alpha_only_with_the_text() -> None:
    text = "νικάσας ἀνίκατον"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    n = len(planes)
    doric = POSTERIOR_FEATURES.index("doric_alpha")
    assert doric in POSTERIOR_GROUPS["dialect"]
    stage = {"weights": [1.0, 4.0], "bias": 0.0, "features": [0, doric]}
    dec = MacronDecoder(_dialect_lexicon(), {"lexicon": {"posterior": stage}})
    p, metre = np.full(n, 0.2), np.zeros(n)
    with_text = dec.posterior(p, metre, dich, planes=planes, text=text)
    without = dec.posterior(p, metre, dich, planes=planes)
    long_now = [text[int(o)] for o, q in zip(np.asarray(planes.offsets), with_text, strict=True) if q > 0.5]
    assert long_now == ["ά", "α"]  # νικ-ᾱ́-σας, ἀνίκ-ᾱ-τον; ι and the privative ἀ stay short
    assert (without[dich] < 0.5).all()


def test_the_deictic_iota_is_found_on_demonstratives_and_adverbs_only() -> None:
    text = "οὑτοσὶ τουτῳὶ νυνὶ δευρί ὁδί, ἐπὶ περὶ ἐστί πόλι Τουτὶ"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    rule = deictic_iota(text, planes, dich)
    offs = np.asarray(planes.offsets).tolist()
    hits = [m.group() for m in re.finditer(r"[^\W\d_]+", text) for i, o in enumerate(offs)
            if m.start() <= o < m.end() and rule[i] == 1.0]
    assert hits == ["οὑτοσὶ", "τουτῳὶ", "νυνὶ", "δευρί", "ὁδί", "Τουτὶ"]
    assert all(text[offs[i]] in "ὶί" for i in np.nonzero(rule)[0])  # on the final ι itself
    x = prior_features(np.full(len(planes), 0.5), np.zeros((len(planes), 7)), None, rule)
    assert PRIOR_GROUPS["deictic"] == (PRIOR_FEATURES.index("deictic"),)
    assert x[:, PRIOR_FEATURES.index("deictic")].tolist() == rule.tolist()


def test_bacchylides_doric_alpha_gets_the_cue_from_the_real_hunspell_forms(shared_data) -> None:
    lex = MacronLexicon(eta_forms=read_eta_forms(shared_data / "lexica" / "grc_hunspell_wordforms.txt.xz"))
    text = "νικάσας ἀνίκατον δύστανος"  # Doric for Attic νικήσας ἀνίκητον δύστηνος
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    doric = dialect_features(text, planes, dich, lex)[:, 1]
    offs = np.asarray(planes.offsets).tolist()
    # νικ-ᾱ́-σας ἀνίκ-ᾱ-τον δύστ-ᾱ-νος
    assert [(text[offs[i]], i) for i in np.nonzero(doric)[0]] == [("ά", 3), ("α", 11), ("α", 19)]
    # the shipped calibration (dev-fitted) raises the odds of those ᾱ
    cfg = Path(__file__).resolve().parents[2] / "assets" / "models" / "grc_stoicheia_doc_clean" / "scanner" / "cfg"
    calibration = json.loads(cfg.read_text())["macron_calibration"]
    p = np.full(len(planes), 0.3)
    with_cue = MacronDecoder(lex, calibration).prior(text, planes, p, dich)
    without = MacronDecoder(MacronLexicon(), calibration).prior(text, planes, p, dich)
    assert (with_cue[doric == 1] > without[doric == 1] + 0.1).all()


def _corpus_lexicon() -> MacronLexicon:
    # counts as Iliad 1 gives them (tests/lab/scan/test_corpus_lengths.py): θεᾱ́ 7 long, Ᾰ̓χαιῶν 22 short
    return MacronLexicon(corpus={"θεά": [2, 7, 0], "ἀχαιῶν": [0, 0, 22]})


def test_corpus_votes_are_log_odds_and_log_counts_at_the_counted_letter() -> None:
    text = "θεὰ Ἀχαιῶν μυρία"  # grave and capital fold to the table's keys; μυρία is unseen
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    votes = corpus_votes(text, planes, dich, _corpus_lexicon())
    offs = np.asarray(planes.offsets).tolist()
    seen = {text[offs[i]]: votes[i].round(4).tolist() for i in np.nonzero(votes.any(axis=1))[0]}
    assert seen == {"ὰ": [round(float(np.log(7.5 / 0.5)), 4), round(float(np.log(8)), 4)],
                    "Ἀ": [round(float(np.log(0.5 / 22.5)), 4), round(float(np.log(23)), 4)]}
    assert corpus_votes(text, planes, dich, MacronLexicon()).sum() == 0  # an asset without the table
    assert corpus_votes(text, planes, dich, None).sum() == 0
    cols = [PRIOR_FEATURES.index("corpus_log_odds"), PRIOR_FEATURES.index("corpus_log_count")]
    assert PRIOR_GROUPS["corpus"] == tuple(cols) and POSTERIOR_GROUPS["corpus"] == (
        POSTERIOR_FEATURES.index("corpus_log_odds"), POSTERIOR_FEATURES.index("corpus_log_count"))
    x = prior_features(np.full(len(planes), 0.5), np.zeros((len(planes), 7)), corpus=votes)
    assert np.array_equal(x[:, cols], votes)


def test_a_corpus_stage_runs_with_and_without_the_table() -> None:
    text = "θεὰ Ἀχαιῶν"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    n = len(planes)
    odds = POSTERIOR_FEATURES.index("corpus_log_odds")
    stage = {"weights": [1.0, 1.0], "bias": 0.0, "features": [0, odds]}
    prior_stage = {"weights": [1.0, 1.0], "bias": 0.0, "features": [0, PRIOR_FEATURES.index("corpus_log_odds")]}
    cal = {"lexicon": {"prior": prior_stage, "posterior": stage}}
    p, metre = np.full(n, 0.5), np.zeros(n)
    offs = np.asarray(planes.offsets).tolist()
    with_table = MacronDecoder(_corpus_lexicon(), cal)
    old_asset = MacronDecoder(MacronLexicon(), cal)  # an asset built before the table: zeros, no error
    post = with_table.posterior(p, metre, dich, planes=planes, text=text)
    assert {text[offs[i]]: bool(post[i] > 0.5) for i in np.nonzero(dich)[0]} == {"ὰ": True, "Ἀ": False}
    assert np.allclose(old_asset.posterior(p, metre, dich, planes=planes, text=text)[dich], 0.5)
    assert np.allclose(with_table.posterior(p, metre, dich, planes=planes)[dich], 0.5)  # no text: no counts
    prior = with_table.prior(text, planes, p, dich)
    assert (prior[dich] != 0.5).all() and np.allclose(old_asset.prior(text, planes, p, dich)[dich], 0.5)


def test_the_shipped_calibration_runs_with_an_old_lexicon_asset(tmp_path) -> None:
    cfg = Path(__file__).resolve().parents[2] / "assets" / "models" / "grc_stoicheia_doc_clean" / "scanner" / "cfg"
    calibration = json.loads(cfg.read_text())["macron_calibration"]
    old = MacronLexicon()
    old.add(*from_markup("θεά_"), SOURCES["hypotactic"])
    old.to_disk(tmp_path / "old.json.gz")
    back = MacronLexicon.from_disk(tmp_path / "old.json.gz")
    assert back.corpus == {} and "corpus" not in back.meta and "Hypotactic's scanned" not in back.meta["licence"]
    text = "μυρία ἄλγε θεά"
    planes = encode_planes(text)
    dich = dichrona_mask(planes)
    n = len(planes)
    for lex in (back, _corpus_lexicon()):
        dec = MacronDecoder(lex, calibration)
        p = dec.posterior(dec.prior(text, planes, np.full(n, 0.4), dich), np.zeros(n), dich,
                          margin=np.zeros(n), planes=planes, verse_metre=np.zeros(n), text=text)
        assert np.isfinite(p).all() and ((p[dich] > 0) & (p[dich] < 1)).all()
