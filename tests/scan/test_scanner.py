"""The stoicheia_scanner factory on the golden tiny checkpoint (and the shipped heads, if any)."""

import numpy as np
import spacy
from spacy.training import Example
from stoicheia_lab.scan.silver import ScannedLine, label_line

from stoicheia_spacy.scan.model import torch_heads

LINES = [
    ("οὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,", "HLLHHHLLHHHLLHH"),
    ("πολλὰς δ’ἰφθίμους ψυχὰς Ἄϊδι προΐαψεν", "HHHHHHHLLHLLHH"),
]


def _nlp(model_config, checkpoint, lexicon=None):
    """Encoder + scanner; ``lexicon``: the scanner's lexicon data package block (None: none)."""
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": model_config})
    nlp.add_pipe("stoicheia_scanner", config={"lexicon": lexicon})
    nlp.config["initialize"]["components"]["stoicheia_encoder"] = {
        "loader": {"@misc": "stoicheia.BackboneLoader.v1", "source": str(checkpoint)}}
    return nlp


def _examples(nlp):
    out = []
    for text, w in LINES:
        lab = label_line(ScannedLine(text, w, "hexameter", "iliad1"))
        assert lab is not None
        ref = nlp.make_doc(text)
        ref._.scan_gold = {"macron": lab.macron.tolist(), "scan": lab.scan.tolist()}
        out.append(Example(nlp.make_doc(text), ref))
    return out


def test_update_lowers_loss_and_annotations_have_shapes(tiny_model_config, tiny_checkpoint) -> None:
    nlp = _nlp(tiny_model_config, tiny_checkpoint)
    egs = _examples(nlp)
    nlp.initialize(lambda: egs)
    losses = []
    for _ in range(8):
        step: dict = {}
        nlp.update(egs, losses=step)
        losses.append(step["stoicheia_scanner"])
    assert losses[-1] < losses[0] * 0.8
    doc = nlp(LINES[0][0])
    assert doc._.stoicheia is not None
    scores = nlp.get_pipe("stoicheia_scanner").predict([doc])
    assert scores[0].shape == (len(doc._.stoicheia.planes), 6)
    (verse,) = doc._.verses
    assert len(verse._.scansion.pattern) == len(verse._.scansion.syllables) == 15
    assert verse._.meter is None or verse._.meter.name
    assert all(0.0 <= m.p_long <= 1.0 for m in doc._.macrons)
    assert "".join(t._.macronized for t in doc).replace("\u0304", "").replace("\u0306", "") \
        .replace("ᾱ", "α").replace("ᾰ", "α") != ""


def test_serialization_round_trip(tmp_path, tiny_model_config, tiny_checkpoint) -> None:
    nlp = _nlp(tiny_model_config, tiny_checkpoint)
    egs = _examples(nlp)
    nlp.initialize(lambda: egs)
    nlp.update(egs)
    before = nlp(LINES[1][0])
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    after = loaded(LINES[1][0])
    assert before._.macrons == after._.macrons
    assert before._.verses[0]._.scansion == after._.verses[0]._.scansion
    a = torch_heads(nlp.get_pipe("stoicheia_scanner").model).state_dict()
    b = torch_heads(loaded.get_pipe("stoicheia_scanner").model).state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


def test_abstain_below_leaves_vowels_unmarked(tiny_model_config, tiny_checkpoint) -> None:
    nlp = _nlp(tiny_model_config, tiny_checkpoint)
    nlp.initialize(lambda: _examples(nlp))
    nlp.get_pipe("stoicheia_scanner").configure(abstain_below=1.01)
    doc = nlp(LINES[0][0])
    assert all(m.length is None for m in doc._.macrons)
    assert "".join(t._.macronized for t in doc) == "".join(t.text for t in doc)


def test_default_package_scans_iliad_1_1_as_hexameter(default_parts) -> None:  # type: ignore[no-untyped-def]
    nlp = default_parts("stoicheia_scanner")  # the default config's encoder + scanner
    doc = nlp("ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ")
    meter = doc._.verses[0]._.meter
    assert meter is not None and meter.name == "dactylic_hexameter"
    # 17 syllables: five dactyls, so the metre forces the open α of ἄνδρα, μοῦσα, μάλα (twice) short
    by_metre = [(doc.text[m.offset], m.length, m.metre_margin) for m in doc._.macrons if m.metre]
    assert by_metre == [("α", 0, 20.0), ("α", 0, 20.0), ("ά", 0, 20.0), ("α", 0, 20.0)]
    assert all(m.metre_margin == 0.0 for m in doc._.macrons if not m.metre)  # ἄν closed, λύ before τρ
    assert all(m.p_long < 0.5 for m in doc._.macrons if m.metre)


def test_heads_are_stepped_by_the_training_optimizer(tiny_model_config, tiny_checkpoint) -> None:
    """No private optimizer: a zero learning rate in the training optimizer leaves the heads
    unchanged, a positive one moves them (through PyTorchWrapper_v3 and finish_update)."""
    from thinc.api import Adam

    nlp = _nlp(tiny_model_config, tiny_checkpoint)
    egs = _examples(nlp)
    nlp.initialize(lambda: egs)
    model = nlp.get_pipe("stoicheia_scanner").model

    def heads() -> dict:
        return {k: v.detach().clone() for k, v in torch_heads(model).state_dict().items()}

    start = heads()
    nlp.update(egs, sgd=Adam(0.0))
    assert all(np.array_equal(start[k].numpy(), v.numpy()) for k, v in heads().items())
    nlp.update(egs, sgd=Adam(0.01))
    assert any(not np.array_equal(start[k].numpy(), v.numpy()) for k, v in heads().items())


def test_lexicon_decoder_decides_where_the_lexicon_is_sure_and_travels_with_the_pipe(
        tmp_path, monkeypatch, tiny_model_config, tiny_checkpoint) -> None:
    import importlib
    import json
    import warnings

    from stoicheia_spacy.scan.macron_lexicon import SOURCES, MacronLexicon, from_markup

    text = "μυρία ἄλγε θεά"
    bare = _nlp(tiny_model_config, tiny_checkpoint)  # lexicon = null: the head alone, said by the config
    bare.initialize(lambda: _examples(bare))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: opting out is the config's explicit choice
        bare(text)
    lex = MacronLexicon()
    lex.add(*from_markup("μυρί_α^"), SOURCES["hypotactic"])
    lex.add(*from_markup("θεά_"), SOURCES["lsj"])
    package = "stoicheia_lexicon_scanner_test"  # a lexicon data package holding this lexicon
    (tmp_path / "site" / package).mkdir(parents=True)
    (tmp_path / "site" / package / "__init__.py").write_text('__version__ = "1.0"\n', encoding="utf-8")
    lex.to_disk(tmp_path / "site" / package / "macron_lexicon.json.gz")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    nlp = _nlp(tiny_model_config, tiny_checkpoint, lexicon={"package": package})
    nlp.initialize(lambda: _examples(nlp))
    pipe = nlp.get_pipe("stoicheia_scanner")
    assert pipe.lexicon_pin.version == "1.0" and len(pipe.lexicon_pin.sha256) == 64
    assert pipe.macron_decoder is None  # found, but nothing calibrated
    assert len(pipe._lexicon) == 2
    # a calibration that trusts the lexicon: Hypotactic (also word-final) and LSJ votes weigh 8 nats
    from stoicheia_spacy.scan.macron_decoder import PRIOR_FEATURES

    weights = [{"backbone": 0.1, "hypotactic": 8.0, "lsj": 8.0, "hypotactic_final": 8.0}.get(f, 0.0)
               for f in PRIOR_FEATURES]
    prior = {"weights": weights, "bias": 0.0, "features": list(range(len(PRIOR_FEATURES)))}
    pipe.calibration = {"lexicon": {"prior": prior}}
    pipe._meters = {}  # no metre: the prior alone decides
    doc = nlp(text)
    lengths = {text[m.offset]: m.length for m in doc._.macrons}
    assert lengths["ί"] == 1 and lengths["ά"] == 1
    assert [m.length for m in doc._.macrons if text[m.offset] == "α"] == [0]
    pipe.configure(abstain_below=0.99)
    unsure = nlp(text)
    assert all(m.length is None for m in unsure._.macrons if m.offset == text.index("ἄ"))
    pipe.configure(abstain_below=0.0)
    pipe.to_disk(tmp_path / "scanner")
    assert not (tmp_path / "scanner" / "macron_lexicon.json.gz").exists()  # the data stays in its package
    assert json.loads((tmp_path / "scanner" / "lexicon.json").read_text(encoding="utf-8"))["package"] == package
    assert json.loads((tmp_path / "scanner" / "calibration.json").read_text(encoding="utf-8")) == pipe.calibration
    assert not (tmp_path / "scanner" / "cfg").exists()  # the settings are config.cfg's
    assert (tmp_path / "scanner" / "meters.json").is_file()  # the metres travel with the pipe
    other = _nlp(tiny_model_config, tiny_checkpoint)
    other.initialize(lambda: _examples(other))
    other.get_pipe("stoicheia_scanner").from_disk(tmp_path / "scanner")
    other.get_pipe("stoicheia_scanner")._meters = {}
    assert [m.length for m in other(text)._.macrons] == [m.length for m in doc._.macrons]
