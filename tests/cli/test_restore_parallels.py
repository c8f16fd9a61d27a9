"""``stoicheia restore ... --parallels N`` with the default pipeline and the installed parallels
index (each skipped where absent): the issue's example, the lost perfect infinitive of a camel
sale (bgu.1.100), lists attested parallels from other papyri for the top candidate, in text and
JSON; without an index it fails with one line naming the data package."""

from __future__ import annotations

import importlib.util
import json

import pytest
from typer.testing import CliRunner

from stoicheia_spacy.accent.lexasset import find_parallels
from stoicheia_spacy.cli import app
from stoicheia_spacy.errors import ParallelsIndexError

LINE = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"


@pytest.fixture(scope="module")
def ready() -> None:
    if importlib.util.find_spec("grc_stoicheia_doc_clean") is None:
        pytest.skip("the default pipeline grc_stoicheia_doc_clean is not installed (make default-package)")
    try:
        find_parallels()
    except ParallelsIndexError as exc:
        pytest.skip(f"no parallels index installed: {exc}")


def test_restore_lists_parallels_of_the_top_candidate(ready: None) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["restore", LINE, "--parallels", "3", "--top", "3", "--json"])
    assert result.exit_code == 0, result.output
    [gaps] = [json.loads(line) for line in result.output.splitlines() if line.startswith("[")]
    top = gaps[0]["candidates"][0]
    assert top["text"] == "κεναι"
    ids = [p["id"] for p in top["parallels"]]
    assert len(ids) == 3 and "bgu.1.100" not in ids  # other papyri, never the document itself
    assert all(p["text"][p["start"]:p["end"]] == "κεναι" and p["url"].startswith("https://papyri.info/ddbdp/")
               for p in top["parallels"])
    text = runner.invoke(app, ["restore", LINE, "--parallels", "3", "--top", "3"])
    assert text.exit_code == 0, text.output
    assert "parallels of κεναι:" in text.output and f"{ids[0]}, l. " in text.output and "‹κεναι›" in text.output


def test_restore_without_the_index_is_one_error_line(ready: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("stoicheia_spacy.accent.lexasset.DATA_PACKAGE", "stoicheia_no_such_data")
    result = CliRunner().invoke(app, ["restore", LINE, "--parallels", "3"])
    assert result.exit_code == 1
    assert "ParallelsIndexError" in result.output and "stoicheia-no-such-data" in result.output
