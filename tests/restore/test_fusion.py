"""Fusion with a character n-gram LM, the abstention threshold and the ``confident`` flag, on
real Greek (a tiny LM fitted on a decree formula; the tiny golden checkpoint as backbone)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import spacy
import torch
from test_beam import CONTEXT, GAP_AT, TableModel, _table
from typer.testing import CliRunner

from stoicheia_spacy.alphabet import MASK_ID, N_ALPHA
from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.backbone import planes_to_tensors
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import CheckpointError, ConfigError
from stoicheia_spacy.restore import GapQuery, ModelScorer, beam_search
from stoicheia_spacy.restore.calibration import fit_threshold
from stoicheia_spacy.restore.char_ngram import SPACE, UNK, CharNgramLM
from stoicheia_spacy.restore.fusion import FusedScorer, union_rescore
from stoicheia_spacy.restore.ngram_lm import (
    NgramScorer,
    load_lm,
    prune,
    save_lm,
    text_symbols,
    window_logprob,
)
from stoicheia_spacy.restore.render import render_html
from tests.conftest import TINY

DECREES = ["ἔδοξεν τῆι βουλῆι καὶ τῶι δήμωι", "ἔδοξε τῆι βουλῆι καὶ τῶι δήμωι ἐπεστάτει",
           "δεδόχθαι τῆι βουλῆι καὶ τῶι δήμωι"] * 5


def _symbols(text: str) -> np.ndarray:
    p = encode_planes(text)
    return np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE)


@pytest.fixture(scope="module")
def lm() -> CharNgramLM:
    return CharNgramLM(order=5).fit([_symbols(t) for t in DECREES])


def test_saved_lm_scores_as_the_fitted_one_and_pruning_keeps_the_best_letter(lm: CharNgramLM, tmp_path: Path) -> None:
    save_lm(lm, tmp_path / "lm.npz")
    back = load_lm(tmp_path / "lm.npz")
    seq, pos = text_symbols(encode_planes("τῆι βουλῆι καὶ τῶι").letters, encode_planes("τῆι βουλῆι καὶ τῶι").boundary)
    masked = seq.copy()
    masked[pos[8]] = UNK  # hide the ι of καὶ
    a, b = lm.masked_logprobs(masked, pos[[8]]), back.masked_logprobs(masked, pos[[8]])
    assert np.allclose(a, b, atol=1e-5)
    assert np.isclose(np.exp(a).sum(), 1.0)
    pruned = prune(load_lm(tmp_path / "lm.npz"), min_count=6)  # keeps what the 3 decrees share
    assert 0 < len(pruned._ngram[-1].keys) < len(lm._ngram[-1].keys)
    pa = pruned.masked_logprobs(masked, pos[[8]])
    assert np.isclose(np.exp(pa).sum(), 1.0) and int(pa.argmax()) == int(a.argmax())
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(CheckpointError):
        load_lm(tmp_path / "bad.npz")


def test_window_logprob_prefers_the_formula(lm: CharNgramLM) -> None:
    rows = [_symbols("τῆι βουλῆι καὶ τῶι δήμωι"), _symbols("τῆι βουλῆι κατ τῶι δήμωι")]
    good, bad = window_logprob(lm, rows, np.array([0, 0]))
    assert good > bad


def test_ngram_scorer_restores_kai_between_council_and_people(lm: CharNgramLM) -> None:
    context = encode_planes("ἔδοξεν τῆι βουλῆι τῶι δήμωι")
    at = len(encode_planes("ἔδοξεν τῆι βουλῆι").letters)
    query = GapQuery(context, at, (3,))
    [cands] = beam_search(NgramScorer(lm), [query], beam=10, n_best=5)
    assert cands[0].text == "και"


def test_fused_scorer_is_the_backbone_at_weight_zero_and_a_normalised_product_otherwise(lm: CharNgramLM) -> None:
    model = TableModel(_table())
    batch = planes_to_tensors([CONTEXT])
    batch.pop("lengths")
    batch["input_ids"][0, GAP_AT] = MASK_ID
    bb_letters, bb_breaks = ModelScorer(model)(batch)
    same = FusedScorer(ModelScorer(model), NgramScorer(lm), 0.0)(batch)
    assert torch.equal(same[0], bb_letters) and torch.equal(same[1], bb_breaks)
    letters, breaks = FusedScorer(ModelScorer(model), NgramScorer(lm), 0.7)(batch)
    ng_letters, _ = NgramScorer(lm)(batch)
    expect = torch.log_softmax(bb_letters[0, GAP_AT, :N_ALPHA] + 0.7 * ng_letters[0, GAP_AT, :N_ALPHA], -1)
    assert torch.allclose(letters[0, GAP_AT, :N_ALPHA], expect, atol=1e-5)
    assert torch.allclose(breaks.exp().sum(-1), torch.ones(breaks.shape[:2]), atol=1e-5)
    [cands] = beam_search(FusedScorer(ModelScorer(model), NgramScorer(lm), 0.7), [GapQuery(CONTEXT, GAP_AT, (3,))],
                          beam=5, n_best=5)
    assert len(cands) == 5 and all(len(c.text) == 3 for c in cands)


def test_union_rescoring_merges_both_lists_with_a_floor_for_missing_texts() -> None:
    fused = [("και", -2.0, 3), ("κατα", -3.0, 4)]
    ngram = [("και", -1.0, 3), ("παρα", -1.5, 4)]
    merged = {t: s for t, s, _ in union_rescore(fused, ngram, union_weight=1.0, floor=1.0)}
    assert merged == {"και": -3.0, "κατα": -3.0 + (-1.5 - 1.0), "παρα": (-3.0 - 1.0) - 1.5}
    assert union_rescore([], [], union_weight=1.0) == []


def test_threshold_is_the_lowest_probability_with_ninety_percent_precision() -> None:
    probs = np.array([0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05])
    right = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0], dtype=bool)
    assert fit_threshold(probs, right, precision=0.9) == pytest.approx(0.2)  # 9 right of 10
    assert fit_threshold(probs, ~right, precision=0.9) == 1.0  # never 90 % right: never confident
    assert fit_threshold(probs[:3], right[:3], precision=0.9, min_count=5) == 1.0


@pytest.fixture(scope="module")
def nlp(tiny_restorer_nlp: spacy.Language) -> spacy.Language:
    return tiny_restorer_nlp


def test_confident_flag_follows_the_threshold_in_items_cli_and_html(nlp: spacy.Language, tmp_path: Path) -> None:
    pipe = nlp.get_pipe("stoicheia_restorer")
    assert pipe.cfg["dtype"] == "float32"  # the encoder's own weights, no bf16 copy
    pipe.configure(confident_above=0.0)
    [item] = nlp("τῆι βουλῆι [.3] δήμωι")._.restorations
    assert item.confident is True
    pipe.configure(confident_above=1.0)
    try:
        doc = nlp("τῆι βουλῆι [.3] δήμωι")
    finally:
        pipe.configure(confident_above=0.6212)
    [item] = doc._.restorations
    assert item.confident is False and not item.abstain
    assert doc._.restored.startswith("τῆι βουλῆι [")  # still restored, flagged
    page = render_html(doc)
    assert "gap unsure" in page and "not confident" in page
    assert nlp.config["components"]["stoicheia_restorer"]["settings"]["confident_above"] == 0.6212

    from stoicheia_spacy.cli import app

    nlp.to_disk(tmp_path / "p")
    out = CliRunner().invoke(app, ["restore", "ἔδοξεν τῆι βουλῆι [.3] δήμωι", "--model", str(tmp_path / "p"),
                                   "--beam", "3", "--top", "3"])
    assert out.exit_code == 0, out.output
    assert "confident" in out.output
    out = CliRunner().invoke(app, ["restore", "ἔδοξεν τῆι βουλῆι [.3] δήμωι", "--model", str(tmp_path / "p"),
                                   "--beam", "3", "--top", "3", "--format", "json"])
    assert '"confident": ' in out.output


def test_bad_dtype_and_threshold_are_config_errors(nlp: spacy.Language) -> None:
    from stoicheia_spacy.errors import ConfigError

    pipe = nlp.get_pipe("stoicheia_restorer")
    for key, value in (("dtype", "float8"), ("confident_above", 1.5), ("lm_weight", -1.0)):
        with pytest.raises(ConfigError):
            pipe.configure(**{key: value})
    assert pipe.cfg["dtype"] == "float32"  # the encoder's own weights, no bf16 copy


def test_restorer_fuses_a_pinned_lm_and_refuses_another(nlp: spacy.Language, lm: CharNgramLM, tmp_path: Path) -> None:
    from stoicheia_spacy.restore.ngram_lm import lm_digest

    save_lm(lm, tmp_path / "lm.npz")
    digest = lm_digest(load_lm(tmp_path / "lm.npz"))
    assert digest == lm_digest(load_lm(tmp_path / "lm.npz"))  # a content pin, not the zip's bytes
    pipe = nlp.get_pipe("stoicheia_restorer")
    text = "ἔδοξεν τῆι βουλῆι [.3] τῶι δήμωι"
    plain = [c.text for c in nlp(text)._.restorations[0].candidates]
    pipe.configure(lm=str(tmp_path / "lm.npz"), lm_sha256=digest, lm_weight=3.0)
    try:
        fused = [c.text for c in nlp(text)._.restorations[0].candidates]
        assert fused[0] == "και" and fused != plain  # the tiny backbone alone does not know the formula
        pipe.configure(lm_sha256="0" * 64)
        pipe._lm = None
        with pytest.raises(CheckpointError):
            nlp(text)
    finally:
        pipe.configure(lm=None, lm_sha256=None, lm_weight=1.0)
        pipe._lm = None


def test_restorer_fuses_the_lm_of_its_pinned_data_package(lm: CharNgramLM, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``[components.stoicheia_restorer.lexicon]``: the LM file of the data package, pinned at
    initialize, saved as a pin (never copied), refused when another file is installed."""
    import importlib
    import json

    from stoicheia_spacy.accent import lexasset
    from stoicheia_spacy.errors import LexiconMissingError

    package = "stoicheia_lexicon_lm_test"
    pkg = tmp_path / "site" / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "1.2.3"\n', encoding="utf-8")
    save_lm(lm, pkg / lexasset.RESTORE_LM_FILE)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    nlp = build_pipeline(str(TINY), components=False)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 4, "n_candidates": 4, "lm_weight": 3.0},
                                               "lexicon": {"@misc": "stoicheia.Lexicon.v1", "package": package}})
    restorer = nlp.get_pipe("stoicheia_restorer")
    restorer.initialize(lambda: [], nlp=nlp)
    assert restorer.lexicon_pin.version == "1.2.3" and len(restorer.lexicon_pin.sha256) == 64
    text = "ἔδοξεν τῆι βουλῆι [.3] τῶι δήμωι"
    assert nlp(text)._.restorations[0].candidates[0].text == "και"  # the LM knows the formula
    nlp.to_disk(tmp_path / "p")
    saved = json.loads((tmp_path / "p" / "stoicheia_restorer" / "lexicon.json").read_text(encoding="utf-8"))
    assert saved["package"] == package and saved["sha256"] == restorer.lexicon_pin.sha256
    assert not list((tmp_path / "p").rglob("*.npz"))  # the LM stays in its data package
    loaded = spacy.load(tmp_path / "p")
    assert loaded(text)._.restorations[0].candidates[0].text == "και"
    back = spacy.blank("grc").from_config(nlp.config)  # to_bytes carries the pin too
    back.get_pipe("stoicheia_restorer").from_bytes(restorer.to_bytes())
    assert back.get_pipe("stoicheia_restorer").lexicon_pin == restorer.lexicon_pin
    save_lm(prune(lm, min_count=6), pkg / lexasset.RESTORE_LM_FILE)  # another LM installed
    lexasset._sha256.cache_clear()
    with pytest.raises(LexiconMissingError, match="stoicheia-lexicon-lm-test.*not the file"):
        spacy.load(tmp_path / "p")


def test_lm_rescorer_scores_the_filled_window_from_both_sides(lm: CharNgramLM) -> None:
    """The joint log-probability of candidate + right context given the left: the decree's καί
    beats letters the LM has not seen there, and a gap inside a word is scored joined to it."""
    from stoicheia_spacy.leiden import parse_gaps
    from stoicheia_spacy.restore import build_queries
    from stoicheia_spacy.restore.ngram_lm import LMRescorer

    [target] = [t for t in build_queries(parse_gaps("ἔδοξεν τῆι βουλῆι [.3] τῶι δήμωι")) if t.gap.kind in ("target", "lacuna")]
    rescorer = LMRescorer(lm, 1.0, context=24)
    kai, other = rescorer(target.query, ["και", "ουλ"])
    assert kai > other + 5.0
    assert (LMRescorer(lm, 2.0)(target.query, ["και", "ουλ"]) == 2 * np.array([kai, other])).all()
    [inside] = [t for t in build_queries(parse_gaps("ἔδοξεν τῆι β[.3]ῆι καὶ τῶι δήμωι")) if t.gap.kind in ("target", "lacuna")]
    assert inside.query.left_open and inside.query.right_open
    ουλ, και = rescorer(inside.query, ["ουλ", "και"])
    assert ουλ > και  # βουλῆι, not βκαιῆι
    assert len(LMRescorer(lm, 0.0)(target.query, ["και"])) == 1


def test_confidence_is_platt_scaling_of_the_top_probability_fitted_on_dev(nlp: spacy.Language) -> None:
    from stoicheia_spacy.restore.calibration import fit_confidence, top_confidence

    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 4000)
    truth = top_confidence(p, 2.0, 0.5)  # over-confident low, under-confident high: what rescoring gives
    y = rng.uniform(size=p.size) < truth
    slope, bias = fit_confidence(p, y)
    assert abs(slope - 2.0) < 0.3 and abs(bias - 0.5) < 0.3
    assert top_confidence(0.5) == pytest.approx(0.5) and top_confidence(0.5, 2.0, 0.0) == pytest.approx(0.5)
    pipe = nlp.get_pipe("stoicheia_restorer")
    [item] = nlp("τῆι βουλῆι [.3] δήμωι")._.restorations
    assert item.confidence == pytest.approx(item.candidates[0].share)  # slope 1, bias 0: the probability
    pipe.configure(confidence_slope=2.0, confidence_bias=1.0)
    try:
        [item] = nlp("τῆι βουλῆι [.3] δήμωι")._.restorations
    finally:
        pipe.configure(confidence_slope=1.0, confidence_bias=0.0)
    assert item.confidence == pytest.approx(top_confidence(item.candidates[0].share, 2.0, 1.0))
    assert item.confident == (item.confidence >= pipe.cfg["confident_above"])
    # a pair per width bucket: the 3-letter gap takes the 1-3 pair, the range gap the pooled one
    pipe.configure(confidence_slopes={"1-3": 0.5}, confidence_biases={"1-3": -1.0})
    try:
        short, wide = nlp("τῆι βουλῆι [.3] δήμωι [ca. 5] καὶ")._.restorations
    finally:
        pipe.configure(confidence_slopes={}, confidence_biases={})
    assert short.confidence == pytest.approx(top_confidence(short.candidates[0].share, 0.5, -1.0))
    assert wide.confidence == pytest.approx(wide.candidates[0].share)
    with pytest.raises(ConfigError):
        pipe.configure(confidence_slopes={"1-3": 0.5})  # a slope without its bias
