"""Issue 41, syllables and quantities: iota adscript, per-word syllables, the research strings
agreeing with the default display, ``--meter`` honoured by the default decoder, elegiacs and
iambic trimeters, on real Greek (Homer, Theognis, Callimachus, Sophocles, Euripides)."""

import numpy as np
import pytest
from typer.testing import CliRunner

from stoicheia_spacy.cli import app
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.scan.syllabify import syllabify, word_syllable_ends

ODYSSEY_1_1 = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
THEOGNIS_1_2 = "ὦ ἄνα, Λητοῦς υἱέ, Διὸς τέκος, οὔποτε σεῖο\nλήσομαι ἀρχόμενος οὐδ’ ἀποπαυόμενος"
CALLIMACHUS_EP_1_4 = "νύμφη καὶ πλούτωι καὶ γενεῆι κατ’ ἐμέ,"  # iota adscript, as the edition writes it
CALLIMACHUS_EP_1_10 = "ἔστρεφον εὐρείηι παῖδες ἐνὶ τριόδωι."
OT_1 = "ὦ τέκνα, Κάδμου τοῦ πάλαι νέα τροφή,"
MEDEA_1 = "Εἴθ’ ὤφελ’ Ἀργοῦς μὴ διαπτάσθαι σκάφος"


def shown(text: str) -> list[str]:
    planes = encode_planes(text)
    syl = syllabify(planes, text=text)
    off = np.asarray(planes.offsets)
    ends = word_syllable_ends(syl.ends, syl.nucleus, syl.nucleus, planes, text)
    starts = np.concatenate([[0], ends[:-1] + 1])
    return [text[int(off[a]) : int(off[b]) + 1] for a, b in zip(starts, ends, strict=True)]


@pytest.mark.parametrize("text,word,n", [("τῆι βουλῆι καὶ τῶι δήμωι", "τῆι", 7),
                                         (CALLIMACHUS_EP_1_4, "γενεῆι", 12), (CALLIMACHUS_EP_1_10, "τριόδωι", 13)])
def test_iota_adscript_is_not_a_syllable(text: str, word: str, n: int) -> None:
    planes = encode_planes(text)
    syl = syllabify(planes, text=text)
    assert len(syl) == n  # τῆ|ι was two syllables
    assert any(s.strip(" .,’").endswith(word[-2:]) for s in shown(text))
    assert "ι" not in [s.strip(" .,") for s in shown(text)]


def test_adscript_nucleus_is_long_and_not_a_dichronon() -> None:
    from stoicheia_spacy.scan.syllabify import HEAVY, dichrona_mask

    planes = encode_planes("τῆι")
    syl = syllabify(planes, text="τῆι")
    assert syl.weights.tolist() == [HEAVY] and not dichrona_mask(planes).any()


def test_syllables_are_shown_per_word_not_across_a_word_boundary() -> None:
    odyssey = shown(ODYSSEY_1_1)
    assert "πον" in odyssey and "ὃς" in odyssey and not any("," in s for s in odyssey)  # was "ν, ὃς"
    medea = shown(MEDEA_1)
    assert "θαι" in medea and "σκά" in medea  # was "θαι σ | κά"
    assert len(odyssey) == 17 and len(medea) == 12  # the same syllables, only regrouped


def test_true_diphthongs_and_diaeresis_are_unchanged() -> None:
    assert len(syllabify(encode_planes("Πηληϊάδεω"), text="Πηληϊάδεω")) == 6  # η|ϊ stay apart
    assert len(syllabify(encode_planes("καὶ"), text="καὶ")) == 1


def scan(*args: str) -> str:
    result = CliRunner().invoke(app, ["scan", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_scan_display_odyssey_1_1_per_word() -> None:
    lines = scan(ODYSSEY_1_1).splitlines()
    assert "πον | ὃς" in lines[1] and "ν, ὃς" not in lines[1]
    assert lines[2].strip() == "–⏑⏑–⏑⏑–⏑⏑–⏑⏑–⏑⏑––"


def test_research_format_agrees_with_the_default_display() -> None:
    out = scan("-f", "research", ODYSSEY_1_1).splitlines()
    assert out[0].startswith("ἄ^νδρα^")  # the α of ἄνδρα is short (was ἄ_)
    heavy = [s for s in out[1].replace("}", "]").split("]") if s]
    pattern = "".join("–" if s.lstrip().startswith("[") else "⏑" for s in heavy)
    assert pattern == "–⏑⏑–⏑⏑–⏑⏑–⏑⏑–⏑⏑––"


def test_meter_penta_is_honoured_by_the_default_decoder(tmp_path) -> None:
    out = scan("--meter", "penta", "λήσομαι ἀρχόμενος οὐδ’ ἀποπαυόμενος").splitlines()
    assert out[2].strip() == "–⏑⏑–⏑⏑––⏑⏑–⏑⏑–" and "elegiac_pentameter" in out[3] and "metre applied" in out[3]


def test_theognis_couplet_scans_as_elegiacs_given_and_detected(tmp_path) -> None:
    path = tmp_path / "theognis.txt"
    path.write_text(THEOGNIS_1_2, encoding="utf-8")
    given = scan("--meter", "elegiac", str(path))
    assert "dactylic_hexameter" in given and "elegiac_pentameter  " in given and "gate" not in given
    assert "–⏑⏑–⏑⏑––⏑⏑–⏑⏑–" in given


@pytest.mark.parametrize("line,meter", [(CALLIMACHUS_EP_1_4, "elegiac_pentameter"),
                                        (CALLIMACHUS_EP_1_10, "elegiac_pentameter"),
                                        (OT_1, "iambic_trimeter"), (MEDEA_1, "iambic_trimeter")])
def test_detect_names_pentameters_and_trimeters(line: str, meter: str) -> None:
    out = scan(line).splitlines()
    assert out[3].split()[0] == meter and "metre applied" in out[3]


def test_meter_ia6_scans_sophocles_under_the_trimeter() -> None:
    out = scan("--meter", "ia6", OT_1).splitlines()
    assert out[2].strip() == "––⏑–––⏑–⏑–⏑–" and "iambic_trimeter" in out[3]
