"""The restorer's text domain (papyrus, inscription, literary): read from real EpiDoc headers and
real Greek, and the combination weights it picks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.restore.domain import header_domain, text_domain
from stoicheia_spacy.restore.kneser_ney import SPACE
from stoicheia_spacy.restore.settings import RestorerSettings

# documentary sale formulae as the papyri write them (BGU 1.100 and its kin)
PAPYRI = [
    "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν "
    "δευτερόβολον πυρρὰν καὶ ἀπέχω τὴν συνπεφωνημένην τιμὴν ἀργυρίου δραχμὰς ἑπτακοσίας ὀγδοήκοντα.",
    "Ἀπολλώνιος Ἡρακλείδου Σαραπίωνι χαίρειν. ὁμολογῶ πεπρακέναι σοι ὄνον θήλειαν λευκὴν καὶ ἀπέχω "
    "τὴν τιμὴν ἀργυρίου δραχμὰς ἑκατὸν καὶ βεβαιώσω πάσῃ βεβαιώσει. ἔρρωσο.",
    "Διονύσιος Πτολεμαίου Ἀμμωνίῳ χαίρειν. ὁμολογῶ πεπρακέναι σοι τὸν ὑπάρχοντά μοι δοῦλον καὶ "
    "ἀπέχω παρὰ σοῦ τὴν συνπεφωνημένην τιμὴν ἀργυρίου δραχμὰς τριακοσίας. ἔρρωσο.",
]


def symbols(text: str) -> np.ndarray:
    p = encode_planes(text)
    return np.insert(p.letters.astype(np.int64), np.flatnonzero(p.boundary > 0) + 1, SPACE)


def test_ddbdp_headers_are_papyri(epidoc_ddbdp):
    assert {header_domain(f.read_bytes()) for f in epidoc_ddbdp} == {"papyrus"}


@pytest.mark.parametrize("corpus", ["iospe", "iip"])
def test_inscription_headers_are_inscriptions(shared_data, corpus):
    files = sorted((shared_data / "epidoc" / corpus).glob("*.xml"))[:40]
    assert files
    assert {header_domain(f.read_bytes()) for f in files} == {"inscription"}


def test_a_header_that_says_nothing_and_broken_xml():
    assert header_domain("<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader/><text/></TEI>") is None
    assert header_domain(b"<TEI><teiHeader><idno type='IIP'>x</idno>") in (None, "inscription")
    assert header_domain(b"not xml at all") is None


def test_text_domain_of_real_greek():
    # Iliad 1.1-2 and Odyssey 1.1 with a gap: no editorial marks, literary words
    assert text_domain("μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην, ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ [...]") == "literary"
    assert text_domain("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ [...]") == "literary"
    # a papyrus edited in Leiden: supplements and resolved abbreviations
    assert text_domain("Ἀπίων Ὥρου χαίρειν. ὁμολογῶ πεπρα[κέναι] σοι κάμηλον θήλ(ειαν) [...]") == "papyrus"
    # a plain document without marks has no literary words: the documentary default
    assert text_domain(PAPYRI[1]) == "papyrus"
    assert text_domain("ἡ βουλὴ καὶ ὁ δῆμος [...] Διονυσίου") == "papyrus"


def test_domain_settings_are_validated():
    s = RestorerSettings(kn_weights={"default": [0.0, 1.0, 1.0, 0.0]},
                         kn_domain_weights={"inscription": {"default": [0.2, 1.0, 1.0, 0.0]}})
    assert s.domain_weights("inscription")["default"] == (0.2, 1.0, 1.0, 0.0)
    assert s.domain_weights("literary")["default"] == (0.0, 1.0, 1.0, 0.0)  # no own weights: kn_weights
    assert s.to_dict()["kn_domain_weights"] == {"inscription": {"default": [0.2, 1.0, 1.0, 0.0]}}
    with pytest.raises(ConfigError):
        RestorerSettings(domain="poetry")
    with pytest.raises(ConfigError):
        RestorerSettings(kn_domain_weights={"papyri": {"default": [0.0, 1.0, 1.0, 0.0]}})


def _tiny_restorer(tmp_path: Path, beam: int, n: int) -> tuple[Any, Any]:
    """The tiny checkpoint with a restorer on an 8-gram of real papyri: papyri read by the n-gram
    alone, inscriptions with the backbone weighed 0.3."""
    import torch

    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.restore.kneser_ney import build_kn, kn_digest, save_kn

    torch.set_num_threads(1)
    lm = build_kn([symbols(t) for t in PAPYRI * 3], order=8)
    path = tmp_path / "kn.npz"
    save_kn(lm, path)
    nlp = build_pipeline(str(Path(__file__).resolve().parents[1] / "fixtures" / "char_bert_tiny"))
    pipe: Any = nlp.add_pipe("stoicheia_restorer", config={"settings": {
        "beam_width": beam, "n_candidates": n, "kn_lm": str(path), "kn_lm_sha256": kn_digest(lm),
        "kn_weights": {"default": [0.0, 1.0, 1.0, 0.0]},
        "kn_domain_weights": {"inscription": {"default": [0.3, 1.0, 1.0, 0.0]}}}})
    return nlp, pipe


def test_the_restorer_weighs_each_domain_with_its_own_weights(tmp_path):
    nlp, pipe = _tiny_restorer(tmp_path, 4, 5)
    text = "Ἀπίων Ὥρου χαίρειν. ὁμολογῶ πεπρα[.5] σοι κάμηλον θήλειαν"
    [item] = nlp(text)._.restorations  # read as a papyrus: the n-gram alone, no backbone forward
    assert item.candidates[0].text == "κεναι" and pipe.forwards == 0
    doc = nlp.make_doc(text)
    doc._.domain = "inscription"  # as restore_epidoc sets it from an inscription's header
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    assert pipe.forwards > 0  # the inscription's weights weigh the backbone: its beam ran
    assert "κεναι" in [c.text for c in doc._.restorations[0].candidates]
    before = pipe.forwards
    pipe.configure(domain="papyrus")  # the setting overrides the Doc's domain
    doc = nlp.make_doc(text)
    doc._.domain = "inscription"
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    assert pipe.forwards == before


def test_restore_epidoc_weighs_an_inscription_by_its_header(shared_data, tmp_path):
    from stoicheia_spacy.restore.epidoc import restore_epidoc

    nlp, pipe = _tiny_restorer(tmp_path, 2, 3)
    papyrus = shared_data / "epidoc" / "ddbdp" / "o.claud.1.100.xml"
    assert header_domain(papyrus.read_bytes()) == "papyrus"
    restore_epidoc(nlp, papyrus)  # DDbDP: the papyri's weights, which skip the backbone
    assert pipe.forwards == 0
    out = restore_epidoc(nlp, shared_data / "epidoc" / "iip" / "abur0001.xml")  # IIP: the inscriptions' weights
    assert pipe.forwards > 0 and out.startswith(b"<?xml")
