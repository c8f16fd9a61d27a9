"""stoicheia_dater: dates real papyri (the shipped word n-gram kernel with its pooled-state prior, and dating
formulae it has not seen verbatim), reads the shared forward's states or falls back to the text, round-trips
its weights; the pooled-state model; the HTML/SVG view."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import spacy

from stoicheia_spacy.assembly import ENCODER, assemble, default_config, extend
from stoicheia_spacy.date.dater import StoicheiaDater
from stoicheia_spacy.date.dating import BIN_YEARS, DEFAULT_LAYERS, DateModel, pool_states
from stoicheia_spacy.date.render import date_svg, render_date_html
from stoicheia_spacy.date.text import TextDateModel, date_ngrams, fit_vocabulary, vectorize
from stoicheia_spacy.errors import ConfigError

#: PaDoC TM 1014 (Zenon archive, dated 225 BCE in PaDoC) and TM 17930 (Oxyrhynchus, 625 CE): both are
#: among the shipped dater's training papyri (unseen texts: ``FORMULAE`` below).
PTOLEMAIC = ("Ἀρίστων Ζήνωνι χαίρειν. τῆι η τοῦ Μεχεὶρ ἤρξατο Ἀμμώνιος τὰς ὠνὰς ἐπικηρύσσειν. γίνωσκε δὲ "
             "καὶ τὰ βαλανεῖα μισθούμενα ἀνυπόλογα παντὸς ὑπολόγου. ἔδοξεν οὖν μοι μηθὲν ὑποστῆναι ἕως τοῦ "
             "σε παραγενέσθαι. ἐὰν οὖν εὔκαιρόν σοι ἦι, παραγενοῦ, ὅπως ὑποστῶμεν καθὰ ἂν συγκρίνηις. ἔρρωσο. "
             "ἔτους η, Μεχεὶρ θ.")
BYZANTINE = ("ἐν ὀνόματι τοῦ κυρίου καὶ δεσπότου Ἰησοῦ Χριστοῦ τοῦ θεοῦ καὶ σωτῆρος ἡμῶν. Παῦνι ι, "
             "ἰνδικτίωνος ιγ. τῷ αἰδεσίμῳ Ἐνὼχ ῥιπαρίῳ, λογιστῇ καὶ βοηθῷ τοῦ λουτροῦ υἱῷ τοῦ μακαρίου "
             "Γεωργίου ἀπὸ τῆς Ὀξυρυγχιτῶν πόλεως. Αὐρήλιος Ἀνοῦπ υἱὸς Παμουθίου μητρὸς Ἡραίδος ἀπὸ "
             "ἐποικίου Φατεμῆντ τοῦ Ὀξυρυγχίτου νομοῦ")


@pytest.fixture(scope="module")
def nlp(default_parts) -> spacy.Language:  # type: ignore[no-untyped-def]
    """The default config's encoder + the shipped dater."""
    return default_parts("stoicheia_dater")


def whole_stack(nlp: spacy.Language, texts: list[str]) -> list[spacy.tokens.Doc]:
    """``texts`` through ``nlp`` with the encoder keeping its whole stack of states (``states = "all"``)."""
    encoder: Any = nlp.get_pipe(ENCODER)
    encoder.configure(states="all")
    try:
        return list(nlp.pipe(texts))
    finally:
        encoder.configure(states="used")


def test_dater_dates_real_papyri_in_order_with_a_proper_distribution(nlp: spacy.Language) -> None:
    early, late = (doc._.date for doc in nlp.pipe([PTOLEMAIC, BYZANTINE]))
    for estimate in (early, late):
        assert estimate.low < estimate.mean < estimate.high and estimate.level == 0.9
        starts = [start for start, _ in estimate.histogram]
        assert starts == sorted(starts) and all(start % BIN_YEARS == 0 for start in starts)
        assert sum(p for _, p in estimate.histogram) == pytest.approx(1.0)
    assert late.mean - early.mean > 300  # third century BCE vs seventh century CE
    assert early.low <= -225 <= early.high and late.low <= 625 <= late.high
    assert nlp.get_pipe_meta("stoicheia_dater").assigns == ["doc._.date"]


def test_dater_reads_the_shared_forward_round_trips_and_falls_back_to_the_text(
        nlp: spacy.Language, tmp_path: Path) -> None:
    dater = nlp.get_pipe("stoicheia_dater")
    model = dater.date_model
    # the shipped weights: the word n-gram kernel with the prior its leave-one-out chose from the pooled states
    assert isinstance(model, TextDateModel) and model.uses_states and dater.cfg["max_chars"] == 800
    doc = nlp(PTOLEMAIC)
    [full] = whole_stack(nlp, [PTOLEMAIC])
    states = pool_states(full._.stoicheia.hidden, DEFAULT_LAYERS)  # a short letter: every letter pooled
    assert np.array_equal(dater.shared_states(doc), states)  # what the encoder kept for the dater
    assert doc._.stoicheia.hidden is None
    expected = model.estimate(PTOLEMAIC, states=states)
    assert doc._.date == expected
    blank = spacy.blank("grc")  # no encoder, no backbone: the documented word-only fallback
    add_dater_to(blank, dater, tmp_path)
    assert blank(PTOLEMAIC)._.date == model.estimate(PTOLEMAIC)
    assert blank(PTOLEMAIC)._.date.low <= -225 <= blank(PTOLEMAIC)._.date.high
    dater.to_disk(tmp_path / "dater")
    assert not (tmp_path / "dater" / "cfg").exists()  # settings live in config.cfg; the fit in data.json
    restored = StoicheiaDater(max_chars=5).from_disk(tmp_path / "dater")
    assert restored.cfg == dater.cfg and restored.estimate(doc) == expected
    from_bytes = StoicheiaDater().from_bytes(dater.to_bytes())
    assert from_bytes.estimate(doc) == expected
    empty = StoicheiaDater().from_bytes(dater.to_bytes(exclude=["model"]))
    with pytest.raises(ConfigError, match="no weights"):
        empty.estimate(doc)
    with pytest.raises(ConfigError, match="max_chars"):
        StoicheiaDater(max_chars=0)


def test_configured_dater_settings_are_saved_in_config_cfg(nlp: spacy.Language, tmp_path: Path) -> None:
    dater = nlp.get_pipe("stoicheia_dater")
    dater.configure(level=0.5)
    try:
        nlp.to_disk(tmp_path / "p")
    finally:
        dater.configure(level=0.9)
    assert not (tmp_path / "p" / "stoicheia_dater" / "cfg").exists()
    assert spacy.util.load_config(tmp_path / "p" / "config.cfg")["components"]["stoicheia_dater"]["settings"]["level"] == 0.5
    loaded = spacy.load(tmp_path / "p")
    estimate = loaded(PTOLEMAIC)._.date
    assert estimate.level == 0.5 and loaded.get_pipe("stoicheia_dater").cfg["max_chars"] == 800
    with pytest.raises(ConfigError, match="unknown stoicheia_dater options"):
        dater.configure(levle=0.5)


def test_dater_pools_only_the_span_its_states_were_fitted_on(nlp: spacy.Language) -> None:
    text = " ".join([BYZANTINE] * 4)
    assert len(text) > 800
    doc = nlp(text)
    data = doc._.stoicheia
    inside = int(np.sum(np.asarray(data.planes.offsets) < 800))
    assert 0 < inside < data.n_letters
    pooled = nlp.get_pipe("stoicheia_dater").shared_states(doc)
    # the encoder kept only the dater's two layers of the letters it pools, not the whole stack
    assert data.hidden is None and [v.shape for v in data.states.values()] == [(2, inside, 384)]
    hidden = whole_stack(nlp, [text])[0]._.stoicheia.hidden
    assert np.array_equal(pooled, pool_states(np.asarray(hidden)[:, :inside], DEFAULT_LAYERS))
    assert not np.allclose(pooled, pool_states(hidden, DEFAULT_LAYERS))


def dater_config(weights: Path, name: str = "stoicheia_dater") -> dict:
    """The config fragment of a dater read from the folder ``weights``."""
    return {"components": {name: {"factory": "stoicheia_dater"}},
            "initialize": {"components": {name: {"weights": str(weights)}}}}


def add_dater_to(nlp: spacy.Language, dater: StoicheiaDater, tmp_path: Path) -> None:
    dater.to_disk(tmp_path / "copy")
    extend(nlp, dater_config(tmp_path / "copy"))


#: Dating formulae in documents written for this test (not PaDoC texts): a Ptolemaic regnal
#: formula with an eponymous priest, a Roman imperial regnal formula (Antoninus Pius, 139 CE),
#: and a Byzantine post-consular date with an indiction (6th century CE).
FORMULAE = {
    "ptolemaic": ("βασιλεύοντος Πτολεμαίου τοῦ Πτολεμαίου καὶ Ἀρσινόης θεῶν Ἀδελφῶν ἔτους ε ἐφʼ ἱερέως "
                  "τοῦ ὄντος ἐν Ἀλεξανδρείαι Ἀλεξάνδρου καὶ θεῶν Ἀδελφῶν, μηνὸς Δαισίου. ὁμολογεῖ Ἀπολλώνιος "
                  "Μακεδὼν τῆς ἐπιγονῆς ἔχειν παρὰ Ζήνωνος δραχμὰς ἑκατόν."),
    "roman": ("ἔτους δευτέρου Αὐτοκράτορος Καίσαρος Τίτου Αἰλίου Ἁδριανοῦ Ἀντωνίνου Σεβαστοῦ Εὐσεβοῦς, "
              "Φαῶφι ιβ. ὁμολογεῖ Ἡρακλείδης Πτολεμαίου τῶν ἀπὸ κώμης Καρανίδος ἔχειν παρὰ Σαραπίωνος "
              "ἀργυρίου δραχμὰς τεσσαράκοντα."),
    "byzantine": ("μετὰ τὴν ὑπατείαν Φλαουίου Βασιλείου τοῦ λαμπροτάτου, Θὼθ ι, ἰνδικτίονος πέμπτης. "
                  "Φλαουίῳ Ἀπίωνι τῷ ὑπερφυεστάτῳ παρὰ Αὐρηλίου Ἰωάννου υἱοῦ Μηνᾶ ἀπὸ τῆς Ὀξυρυγχιτῶν πόλεως. "
                  "ὁμολογῶ ἐσχηκέναι παρὰ σοῦ χρυσοῦ νομισμάτια δύο."),
}


def test_dater_places_dating_formulae_it_has_not_seen_in_their_era(nlp: spacy.Language) -> None:
    ptolemaic, roman, byzantine = (doc._.date for doc in nlp.pipe(list(FORMULAE.values())))
    assert ptolemaic.mean < 0 < roman.mean < 300 < byzantine.mean
    # year 5 of Ptolemy III (243/2 BCE), year 2 of Antoninus Pius (139 CE), after Basilius' consulate (541)
    assert ptolemaic.low <= -242 <= ptolemaic.high and roman.low <= 139 <= roman.high
    assert byzantine.low <= 550 <= byzantine.high


def test_word_ngrams_fold_case_diacritics_and_sigma_and_drop_numerals() -> None:
    assert date_ngrams("Αὐρηλίου Ἰωάννου, ἰνδικτίονος ε.") == date_ngrams("αυρηλιου ιωαννου ινδικτιονος ε")
    assert "αυρηλιου ιωαννου" in date_ngrams("Αὐρηλίου Ἰωάννου") and "ετουσ" in date_ngrams("ἔτους ιϛ")
    assert not date_ngrams("123 !") and not any("ϛ" in g or "1" in g for g in date_ngrams("ἔτους ιϛ 12"))


def test_text_model_takes_the_weighted_median_of_its_neighbours() -> None:
    texts = [FORMULAE["ptolemaic"], FORMULAE["ptolemaic"] + " ἔρρωσο.", FORMULAE["byzantine"],
             FORMULAE["byzantine"] + " ἐγράφη.", FORMULAE["roman"]]
    years = np.array([-250.0, -240.0, 540.0, 560.0, 139.0])
    vocab, idf = fit_vocabulary(texts, min_df=1)
    x = vectorize(texts, vocab, idf)
    assert np.allclose(np.asarray(x.multiply(x).sum(axis=1)).ravel(), 1.0, atol=1e-5)
    model = TextDateModel(vocab, idf, x, years, np.zeros(len(vocab), dtype=np.float32), 0.0, tau=0.05, k=2,
                          lam=float("inf"), residuals=np.array([-50.0, 0.0, 50.0]))
    query = "μετὰ τὴν ὑπατείαν Φλαουίου Βασιλείου τοῦ λαμπροτάτου, ἰνδικτίονος πέμπτης."
    assert model.predict_mean([query])[0] in (540.0, 560.0)  # one of the two Byzantine neighbours
    assert model.estimate("123 !") is None
    again = TextDateModel.from_bytes(model.to_bytes())
    assert again.predict_mean([query]) == pytest.approx(model.predict_mean([query]))
    assert again.vocab == vocab and again.estimate(query) == model.estimate(query)


def test_text_model_reads_the_shared_forward_states_and_falls_back_without_the_encoder(
        nlp: spacy.Language, tmp_path: Path) -> None:
    texts = [FORMULAE["ptolemaic"], PTOLEMAIC, FORMULAE["roman"], FORMULAE["byzantine"], BYZANTINE]
    years = np.array([-243.0, -225.0, 139.0, 541.0, 625.0])
    states = np.stack([pool_states(doc._.stoicheia.hidden, DEFAULT_LAYERS) for doc in whole_stack(nlp, texts)])
    vocab, idf = fit_vocabulary(texts, min_df=1)
    x = vectorize(texts, vocab, idf)
    # k = 0: the prior alone, so the estimate shows which prior was read: the word ridge (all zero
    # weights, intercept 0) without states, the state ridge (fitted on these five papyri) with them
    model = TextDateModel(vocab, idf, x, years, np.zeros(len(vocab), dtype=np.float32), 0.0, tau=0.1, k=0,
                          lam=float("inf"), residuals=np.array([-50.0, 0.0, 50.0]),
                          state_model=DateModel.fit(states, years, alpha=1e-2, residuals=np.zeros(0)),
                          blend=(0.0, 1.0, 0.0))
    assert model.uses_states
    with_states = model.predict_mean(texts, states)
    assert np.abs(with_states - years).max() < 30 and with_states[0] < 0 < with_states[2] < 300 < with_states[4]
    assert model.predict_mean(texts) == pytest.approx(np.zeros(5))  # no states: the word-only fallback
    again = TextDateModel.from_bytes(model.to_bytes())
    assert again.uses_states and again.predict_mean(texts, states) == pytest.approx(with_states, abs=1e-3)

    dater = StoicheiaDater(model=model)
    dater.to_disk(tmp_path / "states")
    with_encoder = assemble(default_config(), only=[ENCODER])
    extend(with_encoder, dater_config(tmp_path / "states"))
    blank = spacy.blank("grc")
    extend(blank, dater_config(tmp_path / "states"))
    assert with_encoder(BYZANTINE)._.date.mean == pytest.approx(with_states[4], abs=1e-3)  # read the shared forward
    assert blank(BYZANTINE)._.date.mean == pytest.approx(0.0)  # no encoder: the documented fallback

    # a state similarity term (beta): the nearest papyrus by words and states together
    knn = TextDateModel(vocab, idf, x, years, np.zeros(len(vocab), dtype=np.float32), 0.0, tau=0.05, k=1,
                        lam=float("inf"), residuals=np.array([0.0]), state_model=model.state_model, beta=0.2)
    from stoicheia_spacy.date.text import unit_states

    knn.train_states = unit_states(states, model.state_model)  # type: ignore[arg-type]
    restored = TextDateModel.from_bytes(knn.to_bytes())
    assert restored.beta == 0.2 and restored.train_states is not None
    assert list(restored.predict_mean(texts, states)) == list(years)  # each text finds itself first


def test_date_model_fits_a_linear_date_and_rejects_wrong_widths() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 8)).astype(np.float32)
    y = 100 * x[:, 0] + 50
    model = DateModel.fit(x, y, alpha=1e-3, residuals=rng.normal(scale=10, size=200))
    assert np.abs(model.predict_mean(x) - y).max() < 1.0
    assert DateModel.from_bytes(model.to_bytes()).predict_mean(x[:3]) == pytest.approx(model.predict_mean(x[:3]))
    with pytest.raises(ConfigError, match="expects 8"):
        model.predict_mean(x[:, :4])
    with pytest.raises(ConfigError, match="level"):
        StoicheiaDater(level=1.5)


def _attr(svg: str, cls: str, name: str) -> list[float]:
    return [float(v) for v in re.findall(rf'class="{cls}" [^>]*?\b{name}="([-0-9.]+)"', svg)]


def test_svg_draws_every_bin_the_interval_and_the_mean_inside_it(nlp: spacy.Language) -> None:
    estimate = nlp(PTOLEMAIC)._.date
    svg = date_svg(estimate)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert len(_attr(svg, "bin", "x")) == len(estimate.histogram)
    heights = _attr(svg, "bin", "height")
    tallest = max(range(len(heights)), key=heights.__getitem__)
    assert estimate.histogram[tallest][1] == max(p for _, p in estimate.histogram)
    (left,), (width,), (mean_x,) = _attr(svg, "interval", "x"), _attr(svg, "interval", "width"), _attr(svg, "mean", "x1")
    assert left < mean_x < left + width
    assert "BCE" in svg  # a Ptolemaic letter: the axis reaches before the era


def test_page_holds_the_text_and_says_when_there_is_no_estimate(nlp: spacy.Language, tmp_path: Path) -> None:
    docs = list(nlp.pipe([PTOLEMAIC, "123 !"]))
    assert docs[1]._.date is None
    page = render_date_html(docs, path=tmp_path / "date.html")
    assert page.startswith("<!DOCTYPE html>") and (tmp_path / "date.html").read_text(encoding="utf-8") == page
    assert "Ἀρίστων Ζήνωνι χαίρειν" in page and page.count("<svg") == 1
    assert "no date estimate" in page
    assert str(docs[0]._.date).replace("–", "&ndash;") in page or str(docs[0]._.date) in page
