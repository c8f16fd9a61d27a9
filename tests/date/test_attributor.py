"""stoicheia_attributor: genre and dialect of real GLAUx passages from the shipped character
n-gram TF-IDF fit (numpy only, the same features as scikit-learn's), calibrated
probabilities, round trips of its weights; the pooled-state model still loads."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import numpy as np
import pytest
import spacy

from stoicheia_spacy.date.attribution import LabelModel, TextLabelModel, char_ngrams
from stoicheia_spacy.date.attributor import TASKS, StoicheiaAttributor
from stoicheia_spacy.errors import ConfigError

#: GLAUx texts (tlg id -> genre, dialect in GLAUx's metadata): Lysias I, Theocritus' epigrams, Hesiod's Theogony.
TEXTS = {"0540-001": ("Oratory", "Attic"), "0005-002": ("Lyric poetry", "Doric"),
         "0020-001": ("Epic poetry", "Ionic/Epic")}


@pytest.fixture(scope="module")
def passages(shared_data: Path) -> dict[str, str]:
    """The first 400 characters of each of :data:`TEXTS` (word boundary), read from the mirror."""
    out = {}
    with lzma.open(shared_data / "text" / "glaux_text_with_metadata.jsonl.xz", "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["tlg"] in TEXTS:
                text = " ".join(" ".join(record["sentences"]).split())[:400]
                out[record["tlg"]] = text[:text.rfind(" ")]
    assert set(out) == set(TEXTS)
    return out


def test_attributor_labels_real_passages_with_calibrated_distributions(attributor_nlp: spacy.Language,
                                                                       passages: dict[str, str]) -> None:
    docs = dict(zip(passages, attributor_nlp.pipe(passages.values()), strict=True))
    for tlg, doc in docs.items():
        for task in TASKS:
            estimate = getattr(doc._, task)
            assert sum(estimate.probabilities.values()) == pytest.approx(1.0, abs=1e-5)
            assert estimate.probability == max(estimate.probabilities.values())
            assert estimate.label in estimate.probabilities
        assert set(TEXTS[tlg]) <= set(doc._.genre.probabilities) | set(doc._.dialect.probabilities)
    # Epic, Doric and Attic Greek are told apart, and a speech is oratory (all three texts were in the fit).
    assert docs["0020-001"]._.dialect.label == "Ionic/Epic"
    assert docs["0005-002"]._.dialect.label == "Doric"
    assert docs["0540-001"]._.dialect.label in ("Attic", "Attic/Koine")
    assert docs["0540-001"]._.genre.label == "Oratory"
    assert docs["0540-001"]._.dialect.probabilities["Attic"] > docs["0020-001"]._.dialect.probabilities["Attic"]
    assert attributor_nlp.get_pipe_meta("stoicheia_attributor").assigns == ["doc._.genre", "doc._.dialect"]
    assert attributor_nlp("123 !")._.genre is None


def test_attributor_round_trips_and_reads_the_text(attributor_nlp: spacy.Language, passages: dict[str, str],
                                                   tmp_path: Path) -> None:
    attributor = attributor_nlp.get_pipe("stoicheia_attributor")
    assert all(isinstance(m, TextLabelModel) for m in attributor.models.values())
    doc = attributor_nlp(passages["0540-001"])
    assert doc._.dialect == attributor.models["dialect"].estimate(doc.text)
    attributor.to_disk(tmp_path / "attributor")
    restored = StoicheiaAttributor(layers=[0]).from_disk(tmp_path / "attributor")
    assert restored.cfg == attributor.cfg and restored.attribute(doc) == attributor.attribute(doc)
    assert StoicheiaAttributor().from_bytes(attributor.to_bytes()).attribute(doc) == attributor.attribute(doc)
    empty = StoicheiaAttributor().from_bytes(attributor.to_bytes(exclude=["model"]))
    with pytest.raises(ConfigError, match="no weights"):
        empty.attribute(doc)


def test_text_features_are_scikit_learns(passages: dict[str, str]) -> None:
    """The numpy TF-IDF map gives scikit-learn's TfidfVectorizer rows on real Greek."""
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    texts = list(passages.values())
    vectorizer = sklearn_text.TfidfVectorizer(analyzer="char", ngram_range=(1, 4), sublinear_tf=True).fit(texts)
    vocabulary = sorted(vectorizer.vocabulary_, key=vectorizer.vocabulary_.__getitem__)
    model = TextLabelModel(["a", "b"], vocabulary, vectorizer.idf_, np.zeros((2, len(vocabulary))), np.zeros(2))
    expected = vectorizer.transform(["ΤΟΥ  λόγου\nτοῦ ἀνδρός", *texts]).toarray()
    got = np.stack([model.features(t) for t in ["ΤΟΥ  λόγου\nτοῦ ἀνδρός", *texts]])
    assert np.allclose(got, expected, atol=1e-6)
    assert char_ngrams("Ab  c", 1, 2) == {"a": 1, "b": 1, " ": 1, "c": 1, "ab": 1, "b ": 1, " c": 1}


def test_pooled_state_models_still_load(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pooled = LabelModel(["x", "y"], rng.normal(size=(2, 3)).astype(np.float32), np.zeros(2, np.float32),
                        np.zeros(3, np.float32), np.ones(3, np.float32))
    StoicheiaAttributor(models={"genre": pooled}).to_disk(tmp_path / "a")
    again = StoicheiaAttributor().from_disk(tmp_path / "a")
    assert isinstance(again.models["genre"], LabelModel)
    assert again.models["genre"].estimate(np.ones(3)) == pooled.estimate(np.ones(3))


def test_label_model_softmax_temperature_and_bad_shapes() -> None:
    rng = np.random.default_rng(0)
    coef, intercept = rng.normal(size=(3, 4)).astype(np.float32), np.zeros(3, dtype=np.float32)
    sharp = LabelModel(["a", "b", "c"], coef, intercept, np.zeros(4, np.float32), np.ones(4, np.float32), 0.5)
    soft = LabelModel(["a", "b", "c"], coef, intercept, np.zeros(4, np.float32), np.ones(4, np.float32), 4.0)
    x = rng.normal(size=(5, 4)).astype(np.float32)
    assert np.allclose(sharp.predict_proba(x).sum(axis=1), 1.0)
    assert (sharp.predict_proba(x).argmax(axis=1) == soft.predict_proba(x).argmax(axis=1)).all()
    assert (sharp.predict_proba(x).max(axis=1) > soft.predict_proba(x).max(axis=1)).all()
    assert LabelModel.from_bytes(sharp.to_bytes()).estimate(x[0]) == sharp.estimate(x[0])
    with pytest.raises(ConfigError, match="expects 4"):
        sharp.predict_proba(x[:, :2])
    with pytest.raises(ConfigError, match="shapes"):
        LabelModel(["a", "b"], coef, intercept, np.zeros(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(ConfigError, match="tasks"):
        StoicheiaAttributor(models={"author": sharp})
