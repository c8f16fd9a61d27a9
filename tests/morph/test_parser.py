"""stoicheia_parser on the golden tiny encoder with real AGDT sentences: learning, one tree
with one root per sentence, serialization, displaCy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import conllu
import numpy as np
import torch
from spacy import displacy
from spacy.tokens import Doc

from stoicheia_spacy.encoder.token_planes import sentence_lengths
from stoicheia_spacy.morph.conllu import to_conllu
from stoicheia_spacy.morph.mst import is_tree

_spec = importlib.util.spec_from_file_location("morph_helpers", Path(__file__).parents[1] / "morph" / "helpers.py")
assert _spec and _spec.loader
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

TEXT = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην. ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον·"


def _check_trees(doc: Doc, labels: tuple[str, ...]) -> None:
    sents = list(doc.sents)
    for sent in sents:
        heads = np.array([0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent])
        assert all(sent.start <= t.head.i < sent.end for t in sent)
        assert is_tree(heads, single_root=True)
        assert all(t.dep_ in labels for t in sent)


def test_parser_learns_and_makes_one_tree_per_sentence(tmp_path: Path) -> None:
    nlp = H.tiny_nlp("stoicheia_parser")
    egs = H.initialized(nlp)
    parser = nlp.get_pipe("stoicheia_parser")
    assert set(parser.labels) == {d for s in H.load_sentences() for d in s["deps"]}
    torch.manual_seed(0)
    opt = nlp.create_optimizer()
    losses = [nlp.update(egs, sgd=opt, exclude=["stoicheia_encoder"])["stoicheia_parser"] for _ in range(25)]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:3])
    doc = nlp(TEXT)
    assert sentence_lengths(nlp.make_doc(TEXT)) == [7, 8]
    assert [len(s) for s in doc.sents] == [7, 8]
    _check_trees(doc, parser.labels)
    # gold sentence boundaries are respected
    for eg in egs[:3]:
        pred = nlp(Doc(nlp.vocab, words=[t.text for t in eg.reference],
                       sent_starts=[True] + [False] * (len(eg.reference) - 1)))
        assert len(list(pred.sents)) == 1
        _check_trees(pred, parser.labels)
    assert nlp.evaluate(egs)["dep_uas"] > 0.2
    written = to_conllu(doc, "il")
    sents = conllu.parse(written)
    rows = [line.split("\t") for line in written.splitlines() if line and not line.startswith("#")]
    assert len(rows) == len(doc) and all(len(r) == 10 for r in rows)
    assert [len(s) for s in sents] == [7, 8] and sents[0].metadata["newdoc id"] == "il"
    assert sum(t["head"] == 0 for s in sents for t in s) == 2
    assert sents[0].metadata["text"] == "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην."
    assert [t["form"] for s in sents for t in s] == [t.text for t in doc]
    svg = displacy.render(doc, style="dep")
    assert svg.startswith("<svg") and "μῆνιν" in svg
    nlp.to_disk(tmp_path / "nlp")
    restored = H.tiny_nlp("stoicheia_parser")
    restored.get_pipe("stoicheia_encoder").from_disk(tmp_path / "nlp" / "stoicheia_encoder")
    restored.get_pipe("stoicheia_parser").from_disk(tmp_path / "nlp" / "stoicheia_parser")
    again = restored(TEXT)
    assert [(t.head.i, t.dep_) for t in again] == [(t.head.i, t.dep_) for t in doc]


def test_parser_loss_gradient_matches_finite_differences() -> None:
    from stoicheia_spacy.morph.parser import StoicheiaParser

    rng = np.random.default_rng(0)
    arcs = rng.normal(size=(1, 4, 4))
    labels = rng.normal(size=(1, 4, 3))
    heads, labs = [np.array([-1, 2, 0, 2])], [np.array([-1, 0, 2, 1])]
    loss, d_arcs, d_labels = StoicheiaParser.get_loss_arrays(arcs, labels, heads, labs)
    eps = 1e-5
    bumped = arcs.copy()
    bumped[0, 1, 3] += eps
    numeric = (StoicheiaParser.get_loss_arrays(bumped, labels, heads, labs)[0] - loss) / eps
    assert abs(numeric - d_arcs[0, 1, 3]) < 1e-3
    assert np.allclose(d_arcs[0, 0], 0) and np.allclose(d_labels[0, 0], 0)


def test_unpunctuated_page_is_parsed_in_pieces_of_at_most_max_words() -> None:
    """A run-on line of hundreds of words without punctuation used to be one tree: arc
    scores and Chu-Liu-Edmonds cubic in its length (a 775-word line: 13 s, 1 GB)."""
    from stoicheia_spacy.morph.parser import capped_lengths

    assert capped_lengths([7, 10, 25], 10) == [7, 10, 9, 8, 8]
    assert sum(capped_lengths([1001], 160)) == 1001 and max(capped_lengths([1001], 160)) <= 160
    nlp = H.tiny_nlp("stoicheia_parser")
    H.initialized(nlp)
    parser = nlp.get_pipe("stoicheia_parser")
    parser.configure(max_words=12)
    line = " ".join(w for w in TEXT.replace(",", " ").replace(".", " ").replace("·", " ").split()) + " "
    doc = nlp(line * 4)  # 44 words, no sentence-final punctuation
    assert len(doc) == 44
    assert [len(s) for s in doc.sents] == [11] * 4
    _check_trees(doc, parser.labels)
