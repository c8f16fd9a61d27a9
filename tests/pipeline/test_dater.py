"""stoicheia_dater: dates real papyri from the encoder's forward, round-trips its weights; the HTML/SVG view."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import spacy

from stoicheia_spacy.date_render import date_svg, render_date_html
from stoicheia_spacy.dating import BIN_YEARS, DateModel, pool_states
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.pipeline.dater import StoicheiaDater

#: PaDoC TM 1014 (Zenon archive, dated 225 BCE in PaDoC) and TM 17930 (Oxyrhynchus, 625 CE).
PTOLEMAIC = ("Ἀρίστων Ζήνωνι χαίρειν. τῆι η τοῦ Μεχεὶρ ἤρξατο Ἀμμώνιος τὰς ὠνὰς ἐπικηρύσσειν. γίνωσκε δὲ "
             "καὶ τὰ βαλανεῖα μισθούμενα ἀνυπόλογα παντὸς ὑπολόγου. ἔδοξεν οὖν μοι μηθὲν ὑποστῆναι ἕως τοῦ "
             "σε παραγενέσθαι. ἐὰν οὖν εὔκαιρόν σοι ἦι, παραγενοῦ, ὅπως ὑποστῶμεν καθὰ ἂν συγκρίνηις. ἔρρωσο. "
             "ἔτους η, Μεχεὶρ θ.")
BYZANTINE = ("ἐν ὀνόματι τοῦ κυρίου καὶ δεσπότου Ἰησοῦ Χριστοῦ τοῦ θεοῦ καὶ σωτῆρος ἡμῶν. Παῦνι ι, "
             "ἰνδικτίωνος ιγ. τῷ αἰδεσίμῳ Ἐνὼχ ῥιπαρίῳ, λογιστῇ καὶ βοηθῷ τοῦ λουτροῦ υἱῷ τοῦ μακαρίου "
             "Γεωργίου ἀπὸ τῆς Ὀξυρυγχιτῶν πόλεως. Αὐρήλιος Ἀνοῦπ υἱὸς Παμουθίου μητρὸς Ἡραίδος ἀπὸ "
             "ἐποικίου Φατεμῆντ τοῦ Ὀξυρυγχίτου νομοῦ")


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.assets import default_model_dir
    from stoicheia_spacy.pipeline.dater import add_dater

    nlp = build_pipeline(str(default_model_dir()), components=False)
    add_dater(nlp)
    return nlp


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


def test_dater_round_trips_and_reads_only_the_shared_forward(nlp: spacy.Language, tmp_path: Path) -> None:
    dater = nlp.get_pipe("stoicheia_dater")
    doc = nlp(PTOLEMAIC)
    vector = pool_states(doc._.stoicheia.hidden, tuple(dater.cfg["layers"]))
    expected = dater.date_model.estimate(vector)
    assert doc._.date == expected  # from doc._.stoicheia: no backbone of its own
    dater.to_disk(tmp_path / "dater")
    restored = StoicheiaDater(level=0.5).from_disk(tmp_path / "dater")
    assert restored.cfg == dater.cfg and restored.estimate(doc) == expected
    from_bytes = StoicheiaDater().from_bytes(dater.to_bytes())
    assert from_bytes.estimate(doc) == expected
    empty = StoicheiaDater().from_bytes(dater.to_bytes(exclude=["model"]))
    with pytest.raises(ConfigError, match="no weights"):
        empty.estimate(doc)


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
