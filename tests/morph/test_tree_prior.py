"""The parser's tree prior: counts by tag class, their scores, the settings and the parser's use of them."""

from __future__ import annotations

import numpy as np
import pytest
from spacy.language import Language

from stoicheia_spacy.assembly import MORPHOSYNTAX
from stoicheia_spacy.errors import CheckpointError, ConfigError
from stoicheia_spacy.morph.mst import chu_liu_edmonds
from stoicheia_spacy.morph.settings import ParserSettings
from stoicheia_spacy.morph.tree_prior import TreePrior, tag_class, word_class

# AGDT tags: pos, person, number, tense, mood, voice, gender, case, degree
NOUN_NOM = "n-s---mn-"
NOUN_ACC = "n-s---ma-"
ADJ_ACC = "a-s---ma-"
ADJ_NOM = "a-s---mn-"
VERB = "v3spia---"
LABELS = ["ATR", "OBJ", "PRED", "SBJ"]

#: ``ὁ ἀνὴρ ὁρᾷ τὸν ἵππον καλόν``-like trees (article left out): a nominative subject, a verb,
#: an accusative object and an accusative adjective on the object
TREES = [([NOUN_NOM, VERB, NOUN_ACC, ADJ_ACC], ["ἀνήρ", "ὁράω", "ἵππος", "καλός"], [2, 0, 2, 3], ["SBJ", "PRED", "OBJ", "ATR"]),
         ([VERB, NOUN_ACC, ADJ_ACC, NOUN_NOM], ["ὁράω", "ἵππος", "καλός", "ἀνήρ"], [0, 1, 2, 1], ["PRED", "OBJ", "ATR", "SBJ"]),
         ([NOUN_ACC, ADJ_ACC, VERB, NOUN_NOM], ["ἵππος", "καλός", "ὁράω", "ἀνήρ"], [3, 1, 0, 3], ["OBJ", "ATR", "PRED", "SBJ"])] * 5
PARTICLE = "g--------"
#: ``δέ`` hangs on the verb as AuxY, another particle (``γε``) on the noun before it as AuxZ
PARTICLES = [([NOUN_NOM, PARTICLE, VERB], ["ἀνήρ", "δέ", "ὁράω"], [3, 3, 0], ["SBJ", "AuxY", "PRED"]),
             ([NOUN_NOM, PARTICLE, VERB], ["ἀνήρ", "γε", "ὁράω"], [3, 1, 0], ["SBJ", "AuxZ", "PRED"])]


def test_tag_class_keeps_case_for_nominals_and_mood_for_verbs() -> None:
    assert tag_class(NOUN_ACC) == "na"
    assert tag_class("l-s---mn-") == "ln"
    assert tag_class(VERB) == "vi"
    assert tag_class("v-sapamn-") == "vpn"  # a participle: its case too
    assert tag_class("d--------") == "d"
    assert tag_class("") == "-" and tag_class("_SP") == "-"
    assert word_class(PARTICLE, "δέ", {"g:δέ": 0}) == "g:δέ"  # a frequent function word: its own class
    assert word_class(PARTICLE, "γε", {"g:δέ": 0}) == "g"
    assert word_class(NOUN_NOM, "δέ", {"g:δέ": 0}) == "nn"  # only function words


def test_frequent_function_words_have_their_own_attachments() -> None:
    prior = TreePrior.count(PARTICLES * 3 + [PARTICLES[0]], ["AuxY", "AuxZ", "PRED", "SBJ"], function_lemmas=1)
    assert "g:δέ" in prior.classes and "g:γε" not in prior.classes  # δέ is the more frequent
    de = prior.arc_scores([NOUN_NOM, PARTICLE, VERB], ["ἀνήρ", "δέ", "ὁράω"])
    assert de[2].argmax() == 3  # δέ on the verb
    labels = prior.label_scores([NOUN_NOM, PARTICLE, VERB], np.array([3, 3, 0]), ["ἀνήρ", "δέ", "ὁράω"])
    assert prior.labels[int(labels[1].argmax())] == "AuxY"


def test_arc_scores_are_distributions_over_heads_that_prefer_attested_pairs() -> None:
    prior = TreePrior.count(TREES, LABELS)
    # the adjective (word 3) of [nominative noun, verb, accusative noun, accusative adjective, nominative adjective]
    q = prior.arc_scores([NOUN_NOM, VERB, NOUN_ACC, ADJ_ACC, ADJ_NOM])
    assert q.shape == (6, 6)
    assert np.allclose(np.exp(q[1:]).sum(axis=1), 1.0)
    assert np.isneginf(np.diag(q)).all() and np.isneginf(q[0]).all()
    adjective = q[4]
    assert adjective.argmax() == 3  # the accusative noun next to it, which it agrees with
    assert q[2].argmax() == 0  # the finite verb hangs on the root
    assert q[1].argmax() == 2  # the nominative noun on the verb


def test_label_scores_back_off_to_the_dependent_class() -> None:
    prior = TreePrior.count(TREES, LABELS)
    lab = prior.label_scores([NOUN_NOM, VERB, NOUN_ACC, ADJ_ACC], np.array([2, 0, 2, 3]))
    assert [LABELS[i] for i in lab.argmax(axis=1)] == ["SBJ", "PRED", "OBJ", "ATR"]
    assert np.allclose(np.exp(lab).sum(axis=1), 1.0)
    # an accusative adjective on the root was never seen: its relations are its class's
    unseen = prior.label_scores([ADJ_ACC], np.array([0]))[0]
    assert LABELS[int(unseen.argmax())] == "ATR"


def test_bytes_and_files_round_trip_and_bad_ones_are_checkpoint_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    prior = TreePrior.count(TREES, LABELS)
    back = TreePrior.from_bytes(prior.to_bytes())
    assert back.classes == prior.classes and back.labels == prior.labels
    assert np.array_equal(back.label_counts, prior.label_counts) and np.array_equal(back.arc, prior.arc)
    assert np.array_equal(back.label_keys, prior.label_keys)
    prior.to_disk(tmp_path / "p.npz")
    assert np.array_equal(TreePrior.from_disk(tmp_path / "p.npz").arc_gold, prior.arc_gold)
    (tmp_path / "bad.npz").write_bytes(b"not an npz")
    with pytest.raises(CheckpointError, match="tree prior"):
        TreePrior.from_disk(tmp_path / "bad.npz")
    with pytest.raises(CheckpointError, match="do not fit"):
        TreePrior(prior.classes, prior.labels[:2], prior.arc_candidates, prior.arc_gold, prior.label_keys,
                  prior.label_counts)


def test_settings_weigh_by_domain_and_refuse_negative_weights() -> None:
    s = ParserSettings(tree_prior=0.2, tree_prior_labels=0.1, tree_prior_papyrus=0.3, tree_prior_labels_papyrus=0.75)
    assert s.tree_prior_weights(None) == (0.2, 0.1)
    assert s.replace(domain="papyrus").tree_prior_weights(None) == (0.3, 0.75)
    with pytest.raises(ConfigError, match="tree_prior"):
        ParserSettings(tree_prior=-1.0)
    with pytest.raises(ConfigError, match="domain"):
        ParserSettings(domain="poetry")


@pytest.fixture(scope="module")
def nlp(default_parts) -> Language:  # type: ignore[no-untyped-def]
    return default_parts(*MORPHOSYNTAX)


SENTENCE = "ὁ δὲ ἀνὴρ τὸν ἵππον τὸν καλὸν εἶδεν ἐν τῇ ὁδῷ."


def test_default_parser_ships_a_prior_over_its_own_relations(nlp: Language) -> None:
    parser = nlp.get_pipe("stoicheia_parser")
    assert parser.tree_prior is not None
    assert parser.tree_prior.labels == list(parser.labels)
    assert parser.settings.tree_prior > 0 and parser.settings.tree_prior_papyrus > 0


def test_prior_weight_moves_the_tree_and_zero_gives_the_parser_alone(nlp: Language) -> None:
    parser = nlp.get_pipe("stoicheia_parser")
    saved = parser.settings
    try:
        parser.configure(tree_prior=0.0, tree_prior_labels=0.0)
        alone = [(t.head.i, t.dep_) for t in nlp(SENTENCE)]
        prior, parser.tree_prior = parser.tree_prior, None
        assert [(t.head.i, t.dep_) for t in nlp(SENTENCE)] == alone  # no prior: the same as weight 0
        parser.tree_prior = prior
        parser.configure(tree_prior=1000.0, tree_prior_labels=0.0)
        doc = nlp(SENTENCE)
        expected = chu_liu_edmonds(prior.arc_scores([t.tag_ for t in doc], [t.lemma_ for t in doc]) * 1000.0)
        heads = [0 if t.head.i == t.i else t.head.i + 1 for t in doc]
        assert heads == [int(h) for h in expected]  # the prior alone decides at a huge weight
    finally:
        parser.settings = saved


def test_papyrus_doc_takes_the_papyrus_weights(nlp: Language) -> None:
    parser = nlp.get_pipe("stoicheia_parser")
    doc = nlp.make_doc(SENTENCE)
    doc._.domain = "papyrus"
    assert parser._prior_weights(doc) == (0.0, 0.0)  # no tags yet: nothing to weigh
    for name, proc in nlp.pipeline:
        if name != "stoicheia_parser":
            doc = proc(doc)
    assert parser._prior_weights(doc) == (parser.settings.tree_prior_papyrus, parser.settings.tree_prior_labels_papyrus)


def test_prior_survives_to_bytes_and_to_disk(nlp: Language, tmp_path) -> None:  # type: ignore[no-untyped-def]
    parser = nlp.get_pipe("stoicheia_parser")
    data = parser.to_bytes()
    prior, parser.tree_prior = parser.tree_prior, None
    try:
        parser.from_bytes(data)
        assert parser.tree_prior is not None and np.array_equal(parser.tree_prior.arc, prior.arc)
        parser.to_disk(tmp_path / "parser")
        assert (tmp_path / "parser" / "tree_prior.npz").is_file()
        parser.tree_prior = None
        parser.from_disk(tmp_path / "parser")
        assert parser.tree_prior is not None and np.array_equal(parser.tree_prior.label_counts, prior.label_counts)
    finally:
        parser.tree_prior = prior
