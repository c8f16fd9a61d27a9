"""``stoicheia scan`` on the default package (21M backbone + shipped scanner heads)."""

from typer.testing import CliRunner

from stoicheia_spacy.cli import app


def test_scan_prints_iliad_1_1_as_dactylic_hexameter_with_synizesis() -> None:
    result = CliRunner().invoke(app, ["scan", "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "dactylic_hexameter" in lines[3] and "metre applied" in lines[3]
    assert lines[2].strip() == "–⏑⏑–⏑⏑–––⏑⏑–⏑⏑––"
    assert "δεω" in [s.strip() for s in lines[1].split("|")]  # Πηληϊάδεω: -εω in one syllable
