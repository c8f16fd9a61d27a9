"""Real AGDT sentences (12 short ones from fold 0 dev of projects/parse) and tiny pipelines.

Loaded by the morph/pipeline tests with :func:`load_helpers` semantics (importlib by path)."""

from __future__ import annotations

import json
from pathlib import Path

import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from tests.conftest import TINY, TINY_MODEL

torch.set_num_threads(1)

SAMPLE = Path(__file__).with_name("agdt_sample.json")


def load_sentences() -> list[dict]:
    return json.loads(SAMPLE.read_text(encoding="utf-8"))


def gold_doc(nlp: Language, sent: dict) -> Doc:
    """A gold Doc (tags, UPOS, feats, lemmas, one tree) of one sample sentence."""
    return Doc(
        nlp.vocab, words=sent["words"], spaces=sent["spaces"], tags=sent["tags"], pos=sent["pos"],
        morphs=sent["morphs"], lemmas=sent["lemmas"], heads=sent["heads"], deps=sent["deps"],
        sent_starts=[True] + [False] * (len(sent["words"]) - 1),
    )


def examples(nlp: Language) -> list[Example]:
    out = []
    for sent in load_sentences():
        ref = gold_doc(nlp, sent)
        out.append(Example(Doc(nlp.vocab, words=sent["words"], spaces=sent["spaces"]), ref))
    return out


def tiny_nlp(*components: str, cfg: dict | None = None) -> Language:
    """blank grc + the golden tiny encoder (frozen unless a listener says otherwise) + components
    (the accentuator and the scanner without the lexicon data package unless ``cfg`` names it)."""
    nlp = spacy.blank("grc")
    nlp.add_pipe("stoicheia_encoder", config={"model": TINY_MODEL})
    for name in components:
        config = dict((cfg or {}).get(name, {}))
        if name in ("stoicheia_accentuator", "stoicheia_scanner"):
            config.setdefault("lexicon", None)
        nlp.add_pipe(name, config=config)
    return nlp


def initialized(nlp: Language) -> list[Example]:
    from spacy.util import fix_random_seed

    from stoicheia_spacy.backbone import load_backbone
    from stoicheia_spacy.encoder.model import set_backbone_weights

    egs = examples(nlp)
    encoder = nlp.get_pipe("stoicheia_encoder")
    set_backbone_weights(encoder.model, load_backbone(TINY))  # kept by initialize
    fix_random_seed(0)  # head initialisation must not depend on which tests ran before
    nlp.initialize(lambda: egs)
    for _ in encoder.pipe([eg.predicted for eg in egs]):  # frozen encoder: hidden states kept on the Docs
        pass
    return egs
