"""The default package's shipped morphosyntax heads on real held-out AGDT sentences (fold-0
dev; the heads were trained on fold-0 train): well above chance for tags, lemmas and arcs,
one tree per sentence, and the head configs they were trained with (the frozen word vectors
beside form embeddings; a BiLSTM over them for the morphologizer and parser)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import spacy
import torch
from spacy.tokens import Doc

from stoicheia_spacy.assembly import MORPHOSYNTAX
from stoicheia_spacy.assets import default_model_dir
from stoicheia_spacy.heads import kept_parameters, torch_module
from stoicheia_spacy.morph.agdt_to_ud import agdt_to_feats, agdt_to_upos

SAMPLE = Path(__file__).with_name("agdt_sample.json")
TRAINING_CONFIG = Path(__file__).resolve().parents[2] / "assets" / "configs" / "parse_heads_hybrid.cfg"
HEADS = ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")


@pytest.fixture(scope="module")
def scored(default_parts) -> dict[str, float]:  # type: ignore[no-untyped-def]
    nlp = default_parts(*MORPHOSYNTAX)  # the default config's encoder + morphosyntax heads
    keep = ("stoicheia_encoder", *HEADS)
    sents = json.loads(SAMPLE.read_text(encoding="utf-8"))
    right = {"upos": 0, "tag": 0, "lemma": 0, "uas": 0, "las": 0}
    total = 0
    for sent in sents:
        doc = Doc(nlp.vocab, words=sent["words"], spaces=sent["spaces"],
                  sent_starts=[True] + [False] * (len(sent["words"]) - 1))
        for name in keep:
            doc = nlp.get_pipe(name)(doc)
        assert len(list(doc.sents)) == 1 and sum(t.head.i == t.i for t in doc) == 1  # one tree
        for i, tok in enumerate(doc):
            mapped = agdt_to_upos(tok.tag_)  # pos_ is the tag's UPOS (joint decoding)
            assert tok.pos_ == mapped or (mapped, tok.pos_) in {("VERB", "AUX"), ("CCONJ", "SCONJ")}, tok
            assert str(tok.morph) == ("" if agdt_to_feats(tok.tag_) == "_" else agdt_to_feats(tok.tag_))
            head = sent["heads"][i]
            right["upos"] += tok.pos_ == sent["pos"][i]
            right["tag"] += tok.tag_ == sent["tags"][i]
            right["lemma"] += tok.lemma_ == sent["lemmas"][i]
            right["uas"] += tok.head.i == head
            right["las"] += tok.head.i == head and tok.dep_ == sent["deps"][i]
        total += len(doc)
    scores = {k: v / total for k, v in right.items()}
    print(scores)
    return scores


def test_shipped_heads_tag_lemmatize_and_parse_held_out_sentences(scored: dict[str, float]) -> None:
    # measured 0.92 / 0.92 / 0.67 / 0.58 UPOS / lemma / UAS / LAS on these 109 words (the heads
    # before the form embeddings: 0.76 / 0.79 / 0.38 / 0.28); a random head is right about 1 time in 9
    assert scored["upos"] >= 0.85
    assert scored["lemma"] >= 0.85
    assert scored["uas"] >= 0.55
    assert scored["las"] >= 0.45


def test_the_default_config_gives_the_heads_their_training_config() -> None:
    """The blocks of assets/configs/parse_heads_hybrid.cfg: each head reads the frozen backbone's
    word vectors (grad_factor 0) beside embeddings of the form (stoicheia.WordFeatures.v1)."""
    config = spacy.util.load_config(default_model_dir() / "config.cfg", interpolate=False)
    trained = spacy.util.load_config(TRAINING_CONFIG, interpolate=False)
    entries = config["components"]
    lemma = entries["stoicheia_lemmatizer"]["model"]["tok2vec"]
    features = [lemma]
    for name in ("stoicheia_morphologizer", "stoicheia_parser"):
        tok2vec = entries[name]["model"]["tok2vec"]
        assert tok2vec["@architectures"] == "spacy.Tok2Vec.v2"
        # trained with spaCy's padded encoder; the morphologizer runs it packed (the same layers
        # and weights: its tags are as good, projects/parse/metrics/parse_eval_packed_bilstm.json),
        # the parser padded (packed, it lost 0.1-0.7 LAS there)
        encode = trained["components"][name]["model"]["tok2vec"]["encode"]
        assert encode["@architectures"] == "spacy.TorchBiLSTMEncoder.v1"
        run = "stoicheia.BiLSTMEncoder.v1" if name == "stoicheia_morphologizer" else "spacy.TorchBiLSTMEncoder.v1"
        assert tok2vec["encode"] == {**encode, "@architectures": run}
        features.append(tok2vec["embed"])
    for block in features:
        assert block["@architectures"] == "stoicheia.WordFeatures.v1"
        assert block["tok2vec"]["grad_factor"] == 0.0
        assert block["embed"] == trained["components"]["stoicheia_parser"]["model"]["tok2vec"]["embed"]["embed"]
    assert spacy.util.registry.architectures.get("stoicheia.BiLSTMEncoder.v1")


def test_the_default_heads_keep_their_matrices_in_bfloat16(default_parts) -> None:  # type: ignore[no-untyped-def]
    """``weight_dtype = "bfloat16"`` in the default config: the three heads' matrices are kept
    so once loaded (projects/parse/metrics/head_precision.json: their answers against float32)."""
    nlp = default_parts(*MORPHOSYNTAX)
    for name in HEADS:
        module = torch_module(nlp.get_pipe(name).model.get_ref("head"))
        kept = kept_parameters(module)
        assert kept and {p.dtype for p in kept} == {torch.bfloat16}, name
    lemma_out = torch_module(nlp.get_pipe("stoicheia_lemmatizer").model.get_ref("head")).out.weight
    assert lemma_out.shape[0] > 10_000 and lemma_out.dtype == torch.bfloat16
