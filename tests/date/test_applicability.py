"""Dating says when it does not apply (issue 41, item 5): Homer, John, Xenophon, Lysias and a
single word got a confident papyrus date. The shipped fit carries a register test fitted on
held-out papyri and literature (``projects/date/metrics/applicability.json``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stoicheia_spacy.date.dater import packaged_weights
from stoicheia_spacy.date.results import DateEstimate
from stoicheia_spacy.date.text import TextDateModel

METRICS = Path(__file__).resolve().parents[2] / "projects" / "date" / "metrics" / "applicability.json"

LITERARY = {
    "Homer, Odyssey 1.1-2": "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ πλάγχθη, ἐπεὶ Τροίης ἱερὸν "
                            "πτολίεθρον ἔπερσε·",
    "John 1.1-2": "Ἐν ἀρχῇ ἦν ὁ λόγος, καὶ ὁ λόγος ἦν πρὸς τὸν θεόν, καὶ θεὸς ἦν ὁ λόγος. οὗτος ἦν ἐν ἀρχῇ "
                  "πρὸς τὸν θεόν.",
    "Xenophon, Anabasis 1.1.1": "Δαρείου καὶ Παρυσάτιδος γίγνονται παῖδες δύο, πρεσβύτερος μὲν Ἀρταξέρξης, "
                                "νεώτερος δὲ Κῦρος.",
    "Lysias 1.1": "Περὶ πολλοῦ ἂν ποιησαίμην, ὦ ἄνδρες, τὸ τοιούτους ὑμᾶς ἐμοὶ δικαστὰς περὶ τούτου τοῦ "
                  "πράγματος γενέσθαι, οἷοίπερ ἂν ὑμῖν αὐτοῖς εἴητε τοιαῦτα πεπονθότες· εὖ γὰρ οἶδ' ὅτι, εἰ "
                  "τὴν αὐτὴν γνώμην περὶ τῶν ἄλλων ἔχοιτε, ἥνπερ περὶ ὑμῶν αὐτῶν, οὐκ ἂν εἴη ὅστις οὐκ ἐπὶ "
                  "τοῖς γεγενημένοις ἀγανακτοίη.",
    # one of our own: Plato, Apology 17a
    "Plato, Apology 17a": "ὅτι μὲν ὑμεῖς, ὦ ἄνδρες Ἀθηναῖοι, πεπόνθατε ὑπὸ τῶν ἐμῶν κατηγόρων, οὐκ οἶδα· "
                          "ἐγὼ δ' οὖν καὶ αὐτὸς ὑπ' αὐτῶν ὀλίγου ἐμαυτοῦ ἐπελαθόμην, οὕτω πιθανῶς ἔλεγον.",
}
#: BGU I 100 (AD 159) and P.Lond. 6.1912's opening, Claudius' letter to the Alexandrians (AD 41).
SALE = ("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν. "
        "ἔτους δευτέρου καὶ εἰκοστοῦ Ἀντωνίνου Καίσαρος τοῦ κυρίου Τῦβι η.")


@pytest.fixture(scope="module")
def model() -> TextDateModel:
    return TextDateModel.from_bytes((packaged_weights() / "model").read_bytes())


def test_the_shipped_register_is_the_one_the_metrics_file_measured(model: TextDateModel) -> None:
    metrics = json.loads(METRICS.read_text(encoding="utf-8"))
    assert model.register is not None
    assert model.register.threshold == metrics["register"]["threshold"]
    assert model.register.min_words == metrics["length"]["min_words"]
    assert [list(p) for p in model.register.widen] == metrics["length"]["widen"]
    assert metrics["register"]["test"]["balanced_accuracy"] > 0.9


@pytest.mark.parametrize("name", list(LITERARY))
def test_literature_gets_no_confident_papyrus_date(model: TextDateModel, name: str) -> None:
    date = model.estimate(LITERARY[name])
    assert isinstance(date, DateEstimate) and not date.applicable
    assert date.reason is not None and "literary" in date.reason and str(date).startswith("no date: ")
    assert (date.low, date.high) == (model.years.min(), model.years.max())  # widened to the fit's span
    assert date.to_dict()["applicable"] is False


@pytest.mark.parametrize("word", ["χαίρειν", "λόγος"])
def test_a_single_word_is_too_short_to_date(model: TextDateModel, word: str) -> None:
    date = model.estimate(word)
    assert date is not None and not date.applicable and "too short" in (date.reason or "")


def test_papyri_are_still_dated_short_ones_with_a_wider_interval(model: TextDateModel, shared_data: Path) -> None:
    from stoicheia_spacy.leiden import parse_gaps
    from stoicheia_spacy.leiden.epidoc import read_epidoc

    sale = model.estimate(SALE)
    assert sale is not None and sale.applicable and sale.widened > 1.0 and sale.low <= 159 <= sale.high
    letter = parse_gaps(read_epidoc((shared_data / "epidoc/ddbdp/p.lond.6.1912.xml").read_bytes()).text).text[:1500]
    claudius = model.estimate(letter)
    assert claudius is not None and claudius.applicable and claudius.widened == 1.0
    assert claudius.low <= 41 <= claudius.high


def test_the_cli_says_why_and_names_the_weighted_median() -> None:
    run = [sys.executable, "-m", "stoicheia_spacy.cli", "date", "--weights", str(packaged_weights())]
    text = subprocess.run([*run, LITERARY["John 1.1-2"]], capture_output=True, text=True, check=True).stdout
    assert text.startswith("no date: reads as a literary text")
    data = json.loads(subprocess.run([*run, "--format", "json", SALE], capture_output=True, text=True,
                                     check=True).stdout)
    assert data["estimator"] == "weighted median" and data["weighted_median"] == 150.0 and data["applicable"]
    help_text = subprocess.run([*run[:-2], "--help"], capture_output=True, text=True, check=True).stdout
    assert "weighted median" in help_text


def test_the_page_says_no_date_and_draws_no_histogram(model: TextDateModel) -> None:
    import spacy

    from stoicheia_spacy.serve.render import _date

    nlp = spacy.blank("grc")
    john, sale = nlp(LITERARY["John 1.1-2"]), nlp(SALE)
    john._.date, sale._.date = model.estimate(john.text), model.estimate(sale.text)
    assert 'id="no-date"' in _date(john) and "reads as a literary text" in _date(john) and "<svg" not in _date(john)
    assert "<svg" in _date(sale) and "weighted median 150 CE" in _date(sale)
