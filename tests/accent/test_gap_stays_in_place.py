"""Issue 41: in accentuated output a gap stays where it was written (P.Mich. I 29, l. 14:
``Παχὼνς β<gap/>. Σενχὼνς`` came out ``Παχὼνς β. [.1]Σενχὼνς``), in Leiden text and in EpiDoc."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from stoicheia_spacy.cli.app import app

P_MICH_1_29 = "ἔτους λ, Παχὼνς β[.1]. Σενχὼνς ὄνου."  # l. 14, as read from the DDbDP EpiDoc
PWLON = "καὶ τὸν δὲ πῶ[.1]ον αὐτῆς ἀποστελῶ σοι"  # l. 10 of the same letter, a letter lost in πῶλον


def accentuate(*args: str) -> str:
    result = CliRunner().invoke(app, ["accentuate", *args])
    assert result.exit_code == 0, result.output
    return result.output.strip().splitlines()[-1]


def test_gap_after_a_number_stays_before_its_full_stop() -> None:
    out = accentuate(P_MICH_1_29)
    assert "β[.1]." in out and "β. [.1]" not in out


def test_gap_inside_a_word_does_not_split_it() -> None:
    out = accentuate(PWLON)
    assert "πῶ[.1]ον" in out and "[.1] ον" not in out


def test_gap_stays_in_place_in_accentuated_epidoc(epidoc_ddbdp: list[Path]) -> None:
    path = next((p for p in epidoc_ddbdp if p.name == "p.mich.1.29.xml"), None)
    if path is None:
        pytest.skip("p.mich.1.29.xml is not in the mirror")
    out = accentuate("--notation", "epidoc", str(path))
    assert "β[.1]." in out and "β. [.1]" not in out
