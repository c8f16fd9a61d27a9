"""The whole default pipeline: one backbone module, one backbone forward per batch (the dater
included), and serialization round trips that keep every component's annotations. The
attributor ships beside it but is not in it (it calls the Odyssey lyric)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc

from stoicheia_spacy.backbone import StoicheiaEncoder
from stoicheia_spacy.encoder.model import torch_backbone
from stoicheia_spacy.records import plain

_spec = importlib.util.spec_from_file_location("morph_helpers", Path(__file__).parent / "morph" / "helpers.py")
assert _spec and _spec.loader
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

#: Real Greek for every component: a decree with a lacuna (restorer), unaccented prose
#: (accentuator), Iliad 1.1-2 (scanner), a sentence of the Anabasis (morphosyntax).
TEXTS = [
    "ἔδοξε τῇ βουλῇ [.3] τῷ δήμῳ",
    "οτι μεν υμεις ω ανδρες αθηναιοι πεπονθατε",
    "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος\nοὐλομένην, ἣ μυρί’ Ἀχαιοῖς ἄλγε’ ἔθηκε,",
    "Δαρείου καὶ Παρυσάτιδος γίγνονται παῖδες δύο, πρεσβύτερος μὲν Ἀρταξέρξης, νεώτερος δὲ Κῦρος.",
]
COMPONENTS = ["stoicheia_restorer", "stoicheia_accentuator", "stoicheia_morphologizer", "stoicheia_lemmatizer",
              "stoicheia_parser", "stoicheia_scanner"]
#: Shipped components that run no backbone of their own (both read the pooled states of the shared forward; the dater its text too).
POOLING = ["stoicheia_dater"]


def backbones(nlp: Language) -> list[StoicheiaEncoder]:
    """Every distinct StoicheiaEncoder reachable from the components' models (torch shims)."""
    found: dict[int, StoicheiaEncoder] = {}
    for _, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is None:
            continue
        for node in model.walk():
            for shim in node.shims:
                for module in shim._model.modules():
                    if isinstance(module, StoicheiaEncoder):
                        found[id(module)] = module
    return list(found.values())


def annotations(doc: Doc) -> dict[str, Any]:
    """What every component wrote (and the encoder's states) in comparable form."""
    data = doc._.stoicheia
    verses = [(v._.scansion, v._.meter) for v in doc._.verses or []]
    return {
        "hidden": (np.asarray(data.hidden).round(5).tolist() if data.hidden is not None
                   else {k: np.asarray(v).round(5).tolist() for k, v in sorted(data.states.items())}),
        "logits": {k: np.asarray(v).round(4).tolist() for k, v in data.logits.items()},
        "gaps": [(g.start, g.width, g.markup) for g in data.gaps],
        "tokens": [(t.tag_, t.pos_, str(t.morph), t.lemma_, t.head.i, t.dep_, t.norm_, t._.macronized) for t in doc],
        "accent": doc._.accent_text,
        "restorations": doc._.restorations,
        "macrons": doc._.macrons,
        "verses": verses,
    }


@pytest.fixture(scope="module")
def small_default(tmp_path_factory: pytest.TempPathFactory) -> Language:
    """The default pipeline's components on the golden tiny backbone (heads trained for one step,
    the restorer with an overlay of the top block)."""
    from stoicheia_spacy.backbone.overlay import save_overlay, trainable_names

    nlp = H.tiny_nlp(*COMPONENTS)
    egs = H.initialized(nlp)
    nlp.update(egs, sgd=nlp.create_optimizer())
    backbone = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)
    overlay = save_overlay(backbone, trainable_names(backbone, 1), tmp_path_factory.mktemp("overlay"))
    nlp.get_pipe("stoicheia_restorer").set_overlay(overlay)
    restorer = nlp.get_pipe("stoicheia_restorer")
    restorer.configure(beam_width=3, n_candidates=3)
    return nlp


def test_to_disk_load_and_to_bytes_from_bytes_keep_every_annotation(small_default: Language, tmp_path: Path) -> None:
    nlp = small_default
    before = [annotations(d) for d in nlp.pipe(TEXTS)]
    assert before[0]["restorations"] and before[1]["accent"] and before[2]["verses"]
    assert all(t[0] for t in before[3]["tokens"])  # tagged
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert loaded.pipe_names == nlp.pipe_names
    assert [annotations(d) for d in loaded.pipe(TEXTS)] == before
    fresh = spacy.blank("grc").from_config(nlp.config)
    fresh.from_bytes(nlp.to_bytes())
    assert [annotations(d) for d in fresh.pipe(TEXTS)] == before
    # exclude is honoured: without weights the encoder refuses to run; the settings travel in
    # the config (configure() recorded them there), not in the component bytes
    assert nlp.config["components"]["stoicheia_restorer"]["settings"]["beam_width"] == 3
    partial = spacy.blank("grc").from_config(nlp.config)
    assert partial.get_pipe("stoicheia_restorer").cfg["beam_width"] == 3
    partial.from_bytes(nlp.to_bytes(exclude=["stoicheia_encoder"]))
    assert partial.get_pipe("stoicheia_restorer").cfg["beam_width"] == 3
    assert not partial.get_pipe("stoicheia_encoder").has_weights
    pipe = nlp.get_pipe("stoicheia_scanner")
    no_model = type(pipe)(nlp.vocab, pipe.model, "x").from_bytes(pipe.to_bytes(exclude=["model"]))
    assert no_model.cfg == pipe.cfg


def test_the_default_pipeline_holds_one_backbone_and_runs_it_once_per_batch(tmp_path: Path, lexicon_installed: str) -> None:
    from stoicheia_spacy.assembly import build_pipeline
    from stoicheia_spacy.assets import default_model_dir

    build_pipeline(str(default_model_dir())).to_disk(tmp_path / "default")
    nlp = spacy.load(tmp_path / "default")
    assert nlp.pipe_names == ["stoicheia_encoder", *COMPONENTS, *POOLING]  # no stoicheia_attributor
    assert nlp.config["components"]["stoicheia_encoder"]["settings"]["store_hidden"] is True  # what the dater pools
    [backbone] = backbones(nlp)
    restorer = nlp.get_pipe("stoicheia_restorer")
    overlaid = restorer.backbone()
    assert overlaid is not backbone and restorer.overlay is not None
    assert overlaid.e_char is backbone.e_char and overlaid.blocks[0] is backbone.blocks[0]  # shared, no copy
    assert overlaid.blocks[-1] is not backbone.blocks[-1]  # the overlay's own top block
    calls: list[int] = []
    hook = backbone.register_forward_hook(lambda module, args, out: calls.append(int(args[0].shape[0])))
    try:
        texts = [t for t in TEXTS if "[" not in t] * 2  # no gaps: the restorer runs no forward
        docs = list(nlp.pipe(texts, batch_size=3))
    finally:
        hook.remove()
    assert len(calls) == 2  # 6 Docs in batches of 3: one forward each, for every component
    assert docs[0]._.accent_text and docs[1]._.verses[0]._.scansion.pattern
    assert all(t.tag_ and t.lemma_ and t.dep_ for t in docs[2])
    assert all(d._.date.low < d._.date.mean < d._.date.high for d in docs)
    assert "stoicheia_attributor" not in nlp.pipe_names  # it calls the Odyssey lyric: shipped beside, not in
    assert torch.is_tensor(backbone.e_char.weight)


FRESH = """
import json, sys
import spacy
from stoicheia_spacy.records import plain
from stoicheia_spacy.registrations import register_all
register_all()
nlp = spacy.load(sys.argv[1])
texts = json.loads(sys.argv[2])
out = []
for doc in nlp.pipe(texts):
    out.append({"tokens": [(t.tag_, t.pos_, str(t.morph), t.lemma_, t.head.i, t.dep_, t.norm_, t._.macronized) for t in doc],
                "accent": doc._.accent_text, "restorations": plain(doc._.restorations), "macrons": plain(doc._.macrons),
                "verses": [(plain(v._.scansion), plain(v._.meter)) for v in doc._.verses or []]})
print(json.dumps(out, ensure_ascii=False))
"""


def test_a_saved_pipeline_answers_the_same_in_a_fresh_process(small_default: Language, tmp_path: Path) -> None:
    """Metres, overlay and calibrations travel with the saved pipeline: another process (no
    shared state, nothing read from the environment) gives identical annotations."""
    import json
    import subprocess
    import sys

    nlp = small_default
    nlp.to_disk(tmp_path / "p")
    assert (tmp_path / "p" / "stoicheia_scanner" / "meters.json").is_file()
    assert (tmp_path / "p" / "stoicheia_restorer" / "overlay.safetensors").is_file()
    keys = ("tokens", "accent", "restorations", "macrons", "verses")
    here = json.loads(json.dumps([{k: plain(annotations(d)[k]) for k in keys} for d in nlp.pipe(TEXTS)],
                                 ensure_ascii=False))
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path / "p"), json.dumps(TEXTS)], capture_output=True,
                         text=True, cwd=tmp_path, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin",
                                                       "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here
    assert here[0]["restorations"] and here[2]["verses"]


def test_the_encoder_keeps_only_what_the_components_read(small_default: Language, monkeypatch: pytest.MonkeyPatch) -> None:
    """``states = "used"`` (the default): a Doc keeps each pooler's token vectors and the scanner's
    per-letter mix instead of the (depth + 1, letters, d) stack, computed chunk by chunk in the
    forward (one 48-letter row per chunk here), and every component's output is the same as
    from the whole stack, bit for bit."""
    from stoicheia_spacy.encoder import model as encoder_model
    from stoicheia_spacy.scan.model import torch_heads

    nlp = small_default
    encoder: Any = nlp.get_pipe("stoicheia_encoder")
    texts = [*TEXTS, " ".join(TEXTS[2:] * 5), "...", ""]  # long: several windows; no letter; empty
    encoder.configure(states="all")
    try:
        full = list(nlp.pipe(texts, batch_size=3))
    finally:
        encoder.configure(states="used")
    monkeypatch.setattr(encoder_model, "STATE_POSITIONS", 48)
    used = list(nlp.pipe(texts, batch_size=3))
    keys = ("tokens", "accent", "restorations", "macrons", "verses", "logits")
    assert [{k: annotations(d)[k] for k in keys} for d in used] == [{k: annotations(d)[k] for k in keys} for d in full]
    pipes: dict[str, Any] = dict(nlp.pipeline)
    poolers = [node for name in ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
               for node in pipes[name].model.walk() if node.name == "stoicheia_word_pooler"]
    heads = torch_heads(pipes["stoicheia_scanner"].model)
    assert len(poolers) == 3
    for doc, ref in zip(used, full, strict=True):
        data, whole = doc._.stoicheia, ref._.stoicheia
        assert data.hidden is None and whole.hidden.shape == (5, data.n_letters, 64)
        assert sorted(v.shape for v in data.states.values()) == sorted(
            [(len(doc), 64)] * 3 + [(data.n_letters, 64)])  # 3 poolers' token vectors, the scanner's mix
        for pooler in poolers:  # what the pooler computes from the whole stack
            [expected] = pooler.predict([whole])
            assert any(v.shape == expected.shape and np.array_equal(v, expected) for v in data.states.values())
        with torch.no_grad():
            mix = heads.mix_states(torch.from_numpy(np.asarray(whole.hidden))).numpy()
        assert np.array_equal(data.states[heads.state_key()], mix)
