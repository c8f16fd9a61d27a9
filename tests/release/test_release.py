"""Released task checkpoints -> our components: kind detection, exact head mapping
(logits equal the published formulas recomputed from the raw tensors), leftover and
shape errors. Synthetic checkpoints in the exact released layouts (tests/release/synth.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import spacy
import torch
from safetensors.torch import load_file, save_file

from stoicheia_spacy.assembly import build_pipeline
from stoicheia_spacy.backbone import load_backbone, planes_to_tensors
from stoicheia_spacy.backbone.released import backbone_prefix, detect_kind, read_checkpoint
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.encoder.released_pooler import released_mix
from stoicheia_spacy.errors import CheckpointError
from stoicheia_spacy.heads import torch_module
from stoicheia_spacy.morph.released import reference_logits
from stoicheia_spacy.morph.ud import UPOS_TAGS, XPOS_ALPHABETS
from stoicheia_spacy.released_heads import add_released_heads
from stoicheia_spacy.scan.model import torch_heads
from tests.conftest import TINY

from . import synth

torch.set_num_threads(1)
VERSE = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
SENTENCE = "ὁ ἄνθρωπος λέγει τὸν λόγον"


def _pipeline(directory: Path) -> spacy.language.Language:
    nlp = build_pipeline(str(directory), prefix=backbone_prefix(directory), components=False)
    add_released_heads(nlp, directory)
    return nlp


def _reference_layers(directory: Path, text: str) -> tuple[np.ndarray, np.ndarray]:
    """Independent backbone forward: (stored-layout hidden (depth+1, n, d), last_hidden after norm_out)."""
    model = load_backbone(directory, prefix=backbone_prefix(directory))
    t = planes_to_tensors([encode_planes(text)])
    with torch.no_grad():
        out = model(t["input_ids"], t["boundary"], t["dia"], t["punct"], seg_id=t["seg_id"], cap=t["cap"],
                    output_hidden_states=True)
    hidden = torch.stack(out.hidden_states)[:, 0].double().numpy()
    return hidden, out.last_hidden[0].double().numpy()


def _mix(hidden: np.ndarray, last: np.ndarray, mix_w: np.ndarray) -> np.ndarray:
    """The published mix: depth raw block outputs + the normed final, softmax(mix_w)."""
    layers = np.concatenate([hidden[1:], last[None]], 0)
    w = np.exp(mix_w - mix_w.max())
    return np.tensordot(w / w.sum(), layers, axes=(0, 0))


# ------------------------------------------------------------------ detection
def test_kinds_and_prefixes(tmp_path: Path, fixtures_dir: Path) -> None:
    meter = synth.meter_checkpoint(tmp_path / "meter")
    tagger = synth.tagger_parser_checkpoint(tmp_path / "tp", d_arc=16, d_rel=8)
    resto = synth.restoration_checkpoint(tmp_path / "resto")
    assert [detect_kind(p) for p in (meter, tagger, resto, TINY)] == [
        "meter", "tagger_parser", "restoration", "backbone"]
    assert [backbone_prefix(p) for p in (meter, tagger, resto)] == ["encoder.", "tagger.encoder.", None]
    # an export that puts ``model.`` before every name
    exported = tmp_path / "exported"
    exported.mkdir()
    (exported / "config.json").write_text((meter / "config.json").read_text())
    save_file({f"model.{k}": v for k, v in load_file(str(meter / "model.safetensors")).items()},
              str(exported / "model.safetensors"))
    assert detect_kind(exported) == "meter" and backbone_prefix(exported) == "model.encoder."
    assert set(read_checkpoint(exported).tensors) == {"head_mac.weight", "head_scan.weight", "mix_w"}


def test_unrecognised_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="config.json"):
        detect_kind(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "char_bert"}))
    with pytest.raises(CheckpointError, match="model.safetensors"):
        detect_kind(tmp_path)
    save_file({"something.weight": torch.zeros(2)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(CheckpointError, match="unrecognised"):
        detect_kind(tmp_path)


# ------------------------------------------------------------------ meter
def _scanner_logits(nlp: spacy.language.Language, text: str) -> np.ndarray:
    doc = nlp.get_pipe("stoicheia_encoder")(nlp.make_doc(text))
    return nlp.get_pipe("stoicheia_scanner").predict([doc])[0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("scalar_mix", [True, False])
def test_meter_logits_equal_published_formula(tmp_path: Path, scalar_mix: bool) -> None:
    ckpt = synth.meter_checkpoint(tmp_path / "m", scalar_mix=scalar_mix)
    nlp = _pipeline(ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_scanner"]
    doc = nlp(VERSE)
    assert doc.text == VERSE and doc._.verses
    logits = _scanner_logits(nlp, VERSE)
    raw = load_file(str(ckpt / "model.safetensors"))
    hidden, last = _reference_layers(ckpt, VERSE)
    h = _mix(hidden, last, raw["mix_w"].double().numpy()) if scalar_mix else last
    mac = h @ raw["head_mac.weight"].double().numpy().T  # (long, short)
    scan = h @ raw["head_scan.weight"].double().numpy().T
    assert logits.shape == (len(encode_planes(VERSE)), 6)
    np.testing.assert_allclose(logits[:, 0], mac[:, 1], atol=1e-5)  # scanner order: short, long
    np.testing.assert_allclose(logits[:, 1], mac[:, 0], atol=1e-5)
    np.testing.assert_allclose(logits[:, 2:], scan, atol=1e-5)
    # the released heads survive serialization
    nlp.to_disk(tmp_path / "pipe")
    again = spacy.load(tmp_path / "pipe")
    logits2 = _scanner_logits(again, VERSE)
    np.testing.assert_allclose(logits2, logits, atol=1e-6)
    assert torch_heads(again.get_pipe("stoicheia_scanner").model).config["hidden"] == 0  # type: ignore[attr-defined]


def test_meter_wrong_shape_and_missing_mix(tmp_path: Path) -> None:
    ckpt = synth.meter_checkpoint(tmp_path / "m")
    tensors = load_file(str(ckpt / "model.safetensors"))
    bad = dict(tensors, **{"head_mac.weight": torch.zeros(3, synth.D)})
    save_file(bad, str(ckpt / "model.safetensors"))
    nlp = build_pipeline(str(ckpt), prefix="encoder.", components=False)
    with pytest.raises(CheckpointError, match=r"head_mac.weight has shape \(3, 64\), expected \(2, 64\)"):
        add_released_heads(nlp, ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder"]  # nothing half-added
    del tensors["mix_w"]
    save_file(tensors, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match="no mix_w"):
        add_released_heads(nlp, ckpt)


def test_unmapped_tensor_is_named(tmp_path: Path) -> None:
    ckpt = synth.meter_checkpoint(tmp_path / "m")
    tensors = load_file(str(ckpt / "model.safetensors"))
    tensors["head_extra.weight"] = torch.zeros(2, synth.D)
    save_file(tensors, str(ckpt / "model.safetensors"))
    nlp = build_pipeline(str(ckpt), prefix="encoder.", components=False)
    with pytest.raises(CheckpointError, match="unmapped meter tensor.*head_extra.weight"):
        add_released_heads(nlp, ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder"]


# ------------------------------------------------------------------ restoration
def test_restoration_loads_and_restores(tmp_path: Path) -> None:
    ckpt = synth.restoration_checkpoint(tmp_path / "r")
    model = load_backbone(ckpt)
    assert model.config.n_region == 15 and model.config.n_century == 15
    t = planes_to_tensors([encode_planes(SENTENCE)])
    args = (t["input_ids"], t["boundary"], t["dia"], t["punct"])
    with torch.no_grad():
        default = model(*args, seg_id=t["seg_id"]).last_hidden
        unknown = model(*args, seg_id=t["seg_id"], region=torch.tensor([14]), century=torch.tensor([14])).last_hidden
        known = model(*args, seg_id=t["seg_id"], region=torch.tensor([3]), century=torch.tensor([9])).last_hidden
    torch.testing.assert_close(default, unknown)  # unknown metadata by default
    assert not torch.allclose(default, known)
    nlp = _pipeline(ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder", "stoicheia_restorer"]
    text = "ὁ ἄνθρ[..]πος λέγει"
    doc = nlp(text)
    assert doc.text == text
    assert len(doc._.restorations) == 1 and doc._.restored is not None
    # no metadata sizes in the config (as the release's converter writes it): from the table shapes
    cfg = json.loads((ckpt / "config.json").read_text())
    del cfg["n_region"]
    (ckpt / "config.json").write_text(json.dumps(cfg))
    assert load_backbone(ckpt).config.n_region == 15
    # a region table of another size is not a released layout: a clear error
    tensors = load_file(str(ckpt / "model.safetensors"))
    tensors["e_region.weight"] = tensors["e_region.weight"][:14].contiguous()
    save_file(tensors, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match="e_region.weight has 14 rows"):
        _pipeline(ckpt)


# ------------------------------------------------------------------ tagger-parser
@pytest.fixture(scope="module")
def tagger_ckpt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synth.tagger_parser_checkpoint(tmp_path_factory.mktemp("tp") / "ckpt")


@pytest.fixture(scope="module")
def tagger_nlp(tagger_ckpt: Path) -> spacy.language.Language:
    return _pipeline(tagger_ckpt)


def test_tagger_parser_components_and_vocab(tagger_nlp: spacy.language.Language) -> None:
    assert tagger_nlp.pipe_names == ["stoicheia_encoder", "stoicheia_morphologizer", "stoicheia_lemmatizer",
                                     "stoicheia_parser"]
    morph, lem, parser = (tagger_nlp.get_pipe(n) for n in tagger_nlp.pipe_names[1:])
    assert set(morph.labels) == set(synth.TAGS)  # type: ignore[attr-defined]
    assert parser.labels == tuple(synth.DEPRELS)  # type: ignore[attr-defined]
    assert [s.to_list() for s in lem.scripts] == synth.SCRIPTS  # type: ignore[attr-defined]
    assert {"λόγος", "ἄνθρωπος"} <= set(lem.data["lexicon"])  # type: ignore[attr-defined]
    doc = tagger_nlp(SENTENCE + ".")
    assert doc.text == SENTENCE + "."
    assert all(t.tag_ in synth.TAGS for t in doc)
    assert sum(t.head.i == t.i for t in doc) == 1  # one tree


def test_tagger_parser_logits_equal_published_formula(tagger_ckpt: Path, tagger_nlp: spacy.language.Language) -> None:
    nlp = tagger_nlp
    doc = nlp.make_doc(SENTENCE)
    nlp.get_pipe("stoicheia_encoder")(doc)
    lengths = np.asarray(doc._.stoicheia.token_lengths)
    raw = load_file(str(tagger_ckpt / "model.safetensors"))
    hidden, last = _reference_layers(tagger_ckpt, SENTENCE)
    mixed = _mix(hidden, last, raw["tagger.mix_w"].double().numpy())
    words = np.stack([mixed[a:b].mean(0) for a, b in zip(np.cumsum(lengths) - lengths, np.cumsum(lengths), strict=True)])
    # the numpy reference of our pooler agrees with the independent layers
    stored = np.asarray(doc._.stoicheia.hidden)
    norm = raw["tagger.encoder.norm_out.w"].numpy()
    np.testing.assert_allclose(released_mix(stored, norm, raw["tagger.mix_w"].numpy()), mixed, atol=1e-5)

    ref = reference_logits(read_checkpoint(tagger_ckpt), words)
    morph, lem, parser = (nlp.get_pipe(n) for n in nlp.pipe_names[1:])
    vectors = parser.model.get_ref("tok2vec").predict([doc])[0]  # type: ignore[attr-defined]
    np.testing.assert_allclose(vectors, words, atol=1e-5)

    m = morph.predict([doc])[0]  # type: ignore[attr-defined]
    for row, letter in enumerate(synth.UPOS):
        ud = {"a": "ADJ", "c": "CCONJ", "d": "ADV", "g": "PART", "i": "INTJ", "l": "DET", "m": "NUM", "n": "NOUN",
              "p": "PRON", "r": "ADP", "u": "PUNCT", "v": "VERB", "x": "X"}[letter]
        np.testing.assert_allclose(m[:, UPOS_TAGS.index(ud)], ref["upos"][:, row], atol=1e-5)
    assert (m[:, UPOS_TAGS.index("AUX")] < -1e3).all()
    start = len(UPOS_TAGS)
    for p, (alpha, ours) in enumerate(zip(synth.XPOS_ALPHA, XPOS_ALPHABETS, strict=True)):
        for row, ch in enumerate(alpha):
            np.testing.assert_allclose(m[:, start + ours.index(ch)], ref[f"xpos{p}"][:, row], atol=1e-5)
        start += len(ours)
    np.testing.assert_allclose(lem.predict([doc])[0], ref["script"], atol=1e-5)  # type: ignore[attr-defined]

    module: Any = torch_module(parser._head_node()).eval()  # type: ignore[attr-defined]
    n = len(words)
    with torch.no_grad():
        x = torch.from_numpy(words.astype(np.float32))[None]
        arcs, label_dep, label_head = module.arcs(x, torch.ones(1, n, dtype=torch.bool))
        arcs_np = arcs[0, 1:].double().numpy()  # dependents 1..n, heads 0..n
        off_diag = ~np.eye(n, n + 1, k=1, dtype=bool)
        np.testing.assert_allclose(arcs_np[off_diag], ref["arc"][off_diag], atol=1e-4, rtol=1e-5)
        for j in range(n + 1):
            lab = module.labels(label_dep, label_head, torch.full((1, n + 1), j))[0, 1:].double().numpy()
            np.testing.assert_allclose(lab, ref["rel"][:, j], atol=1e-4, rtol=1e-5)


def test_tagger_parser_roundtrip(tmp_path: Path, tagger_nlp: spacy.language.Language) -> None:
    tagger_nlp.to_disk(tmp_path / "pipe")
    again = spacy.load(tmp_path / "pipe")
    a, b = tagger_nlp(SENTENCE + "."), again(SENTENCE + ".")
    assert [(t.tag_, t.pos_, t.lemma_, t.dep_, t.head.i) for t in a] == [
        (t.tag_, t.pos_, t.lemma_, t.dep_, t.head.i) for t in b]


def test_tagger_parser_errors(tmp_path: Path, tagger_ckpt: Path) -> None:
    ckpt = synth.copy_of(tagger_ckpt, tmp_path / "c")
    nlp = build_pipeline(str(ckpt), prefix="tagger.encoder.", components=False)
    (ckpt / "deprel_vocab.json").unlink()
    with pytest.raises(CheckpointError, match="deprel_vocab.json"):
        add_released_heads(nlp, ckpt)
    (ckpt / "deprel_vocab.json").write_text(json.dumps(synth.DEPRELS[:3]))  # 3 labels for a 5-label rel_biaf
    with pytest.raises(CheckpointError, match=r"biaffine.rel_biaf.W has shape"):
        add_released_heads(nlp, ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder"]
    (ckpt / "deprel_vocab.json").write_text(json.dumps(synth.DEPRELS))
    cfg = json.loads((ckpt / "config.json").read_text())
    (ckpt / "config.json").write_text(json.dumps(dict(cfg, pool="last")))
    with pytest.raises(CheckpointError, match="pooling 'last'"):
        add_released_heads(nlp, ckpt)
    (ckpt / "config.json").write_text(json.dumps(cfg))
    vocab = json.loads((ckpt / "vocab.json").read_text())
    vocab["xpos_alpha"][7] = "-ngdaΩ"
    (ckpt / "vocab.json").write_text(json.dumps(vocab))
    with pytest.raises(CheckpointError, match="outside the AGDT inventory"):
        add_released_heads(nlp, ckpt)
    vocab["xpos_alpha"] = synth.XPOS_ALPHA
    (ckpt / "vocab.json").write_text(json.dumps(vocab))
    tensors = load_file(str(ckpt / "model.safetensors"))
    tensors["biaffine.extra_bias"] = torch.zeros(3)
    save_file(tensors, str(ckpt / "model.safetensors"))
    with pytest.raises(CheckpointError, match=r"unmapped tagger_parser tensor\(s\): biaffine.extra_bias"):
        add_released_heads(nlp, ckpt)
    assert nlp.pipe_names == ["stoicheia_encoder"]


def test_released_pooler_gradients() -> None:
    """The pooler's backprop matches finite differences (mix logits and hidden states)."""
    from stoicheia_spacy.encoder.released_pooler import build_released_pooler
    from stoicheia_spacy.encoder.types import StoicheiaDocData

    rng = np.random.default_rng(0)
    planes = encode_planes("λόγος ἀνθρώπου")
    hidden = rng.normal(size=(3, len(planes), 4)).astype(np.float32)
    data = StoicheiaDocData(planes, np.zeros(len(planes), np.int64), np.array([5, 8, 0]), hidden=hidden)
    model = build_released_pooler()
    model.initialize(X=[data])
    model.set_param("mix", np.array([0.3, -0.2, 0.5], dtype=np.float32))
    model.set_param("norm", np.array([1.0, 2.0, 0.5, 1.5], dtype=np.float32))
    out, backprop = model.begin_update([data])
    assert out[0].shape == (3, 4)
    np.testing.assert_allclose(out[0][2], 0.0)  # a token without letters: the (zero) empty vector
    d_hidden = backprop([np.ones_like(out[0])])[0]
    d_mix = model.get_grad("mix")

    def total(mix: np.ndarray, h: np.ndarray) -> float:
        mixed = released_mix(h, np.array([1.0, 2.0, 0.5, 1.5]), mix)
        return float(mixed[:5].mean(0).sum() + mixed[5:].mean(0).sum())

    eps = 1e-3
    mix0 = np.array([0.3, -0.2, 0.5])
    num = [(total(mix0 + eps * np.eye(3)[i], hidden) - total(mix0 - eps * np.eye(3)[i], hidden)) / (2 * eps)
           for i in range(3)]
    np.testing.assert_allclose(d_mix, num, atol=1e-3)
    bump = np.zeros_like(hidden, dtype=np.float64)
    bump[2, 6, 1] = eps
    num_h = (total(mix0, hidden + bump) - total(mix0, hidden - bump)) / (2 * eps)
    np.testing.assert_allclose(d_hidden[2, 6, 1], num_h, atol=1e-3)


def test_region_and_century_ids() -> None:
    from stoicheia_spacy.encoder.metadata import REGIONS, century_id, region_id
    from stoicheia_spacy.errors import InvalidInputError

    assert [region_id(r, 15) for r in ("Attica", "attica", 2, "2", None, "unknown")] == [2, 2, 2, 2, 14, 14]
    assert REGIONS[-1] == "unknown" and len(REGIONS) == 15
    # research table: 15 bins from -800 (bin 14 = 600), unknown 15; specification table: 14 bins, unknown 14
    assert [century_id(y, 16) for y in (-900, -800, -350, 0, 550, 600, None)] == [0, 0, 4, 8, 13, 14, 15]
    assert [century_id(y, 15) for y in (-350, 550, 600, "-350", "unknown")] == [4, 13, 13, 4, 14]
    with pytest.raises(InvalidInputError, match="unknown region"):
        region_id("Atlantis", 15)
    with pytest.raises(InvalidInputError, match="year"):
        century_id("fourth century", 16)
