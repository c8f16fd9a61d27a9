"""``stoicheia date TEXT`` prints the estimate and its 90 % interval of a real papyrus."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from stoicheia_spacy.cli import app

#: PaDoC TM 78696 (Oxyrhynchus, Apion estate; 625 CE in PaDoC).
BYZANTINE = ("ἐν ὀνόματι τοῦ κυρίου καὶ δεσπότου Ἰησοῦ Χριστοῦ τοῦ θεοῦ καὶ σωτῆρος ἡμῶν. μηνὶ Παχὼν κζ, "
             "ἰνδικτίωνος ι. τῷ ἐνδόξῳ οἴκῳ ποτὲ Ἀπίωνος τοῦ ἐν εὐκλεεῖ τῇ μνήμῃ καὶ κατὰ τὴν Ὀξυρυγχιτῶν "
             "πόλιν Αὐρήλιος Ἀνοῦπ υἱὸς τοῦ μακαρίου Παύλου ἑξῆς ὑπογράφων")


def test_date_command_prints_estimate_interval_and_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["date", BYZANTINE, "--format", "json", "--html", str(tmp_path / "date.html")])
    assert result.exit_code == 0, result.output
    estimate = json.loads(result.stdout)
    assert estimate["estimator"] == "weighted median" and estimate["applicable"]  # named as the docs name it
    assert estimate["low"] < estimate["weighted_median"] < estimate["high"] and estimate["level"] == 0.9
    assert estimate["weighted_median"] > 300  # a Byzantine contract, not a Ptolemaic one
    page = (tmp_path / "date.html").read_text(encoding="utf-8")
    assert "Ἀνοῦπ" in page and page.count('class="bin"') == len(estimate["histogram"])
    plain = CliRunner().invoke(app, ["date", "ἔτους η, Μεχεὶρ θ. Ἀρίστων Ζήνωνι χαίρειν."])
    assert plain.exit_code == 0 and "interval" in plain.output and ("BCE" in plain.output or "CE" in plain.output)


def test_date_command_rejects_text_without_greek_letters() -> None:
    result = CliRunner().invoke(app, ["date", "12345 ..."])
    assert result.exit_code == 1
