"""The word check of Run 14 (:mod:`stoicheia_spacy.restore.lexicon`): the words a candidate
completes at a gap's edges, looked up in the vocabulary of a parallels index, on real Greek
(a Zoora tombstone formula, IIP, and a papyrus greeting)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stoicheia_spacy.parallels.index import Document, ParallelIndex, build_index, letters_of
from stoicheia_spacy.restore.lexicon import Vocabulary, edge_words, word_features

ZOORA = "Μνημεῖον Ὠρίων Κλαυδίου ἀποθανόντος ἐτῶν λʹ ἐν μηνὶ Λῴου ἡμέρᾳ Ἀφροδίτης θάρσει οὐδεὶς ἀθάνατος"
GREETING = "Ἡρακλείδης Ἀπολλωνίῳ τῷ ἀδελφῷ χαίρειν"


def document(doc_id: str, text: str, supplied_words: tuple[str, ...] = (), lost_word: str | None = None) -> Document:
    words = text.split()
    letters, supplied, space = [], [], []
    for w in words:
        arr = letters_of(w)
        if w == lost_word:
            arr = arr.copy()
            arr[1] = letters_of("\x00")[0]
        letters.append(arr)
        supplied.append(np.full(len(arr), w in supplied_words))
        end = np.zeros(len(arr), bool)
        end[-1] = True
        space.append(end)
    return Document(id=doc_id, source="inscription", letters=np.concatenate(letters),
                    supplied=np.concatenate(supplied), space_after=np.concatenate(space))


def vocabulary(tmp_path: Path) -> Vocabulary:
    docs = [document("iip:zoor0001", ZOORA, supplied_words=("Κλαυδίου",), lost_word="Μνημεῖον"),
            document("p.test.1", GREETING)]
    build_index(docs, tmp_path / "idx")
    return Vocabulary.from_indexes([ParallelIndex(tmp_path / "idx")])


def test_vocabulary_words_of_an_index(tmp_path: Path) -> None:
    vocab = vocabulary(tmp_path)
    for word in ("ἀθάνατος", "Ἀφροδίτης", "θάρσει", "χαίρειν", "Ἡρακλείδης", "ἀποθανόντος"):
        assert word in vocab
    assert "ΑΘΑΝΑΤΟΣ" in vocab and "αθανατοσ" in vocab  # the index's letter space: case, accents, sigma
    assert "Κλαυδίου" not in vocab  # supplied by an editor: never evidence
    assert "Μνημεῖον" not in vocab  # a lost letter: its form is not known
    assert "ἀθάνατοςχαίρειν" not in vocab  # no word across documents
    assert "" not in vocab and len(vocab) == 12 + 5  # the words of both documents but those two


def test_edge_words_and_features(tmp_path: Path) -> None:
    vocab = vocabulary(tmp_path)
    text = "ἡμέρᾳ Ἀφρ??ίτης. Θάρσει, οὐδεὶς ἀθάνατος."
    s = text.index("??")
    assert edge_words(text[:s], "οδ", text[s + 2:]) == ["Ἀφροδίτης"]
    assert word_features(vocab, text, s, 2, "οδ") == (0, 1)
    assert word_features(vocab, text, s, 2, "ον") == (1, 0)
    assert edge_words(text[:s], "ο ", text[s + 2:]) == ["Ἀφρο", "ίτης"]
    # a gap between words: the candidate's own words and none of the context's
    text = "θάρσει ?????? ἀθάνατος"
    s = text.index("?")
    assert edge_words(text[:s], "οὐδεὶς", text[s + 6:]) == ["οὐδεὶς"]
    assert word_features(vocab, text, s, 6, "οὐδεὶς") == (0, 1)
    # a word with a lost letter (the records' "-") is not checked
    text = "Ἡρα-λ??δης χαίρειν"
    s = text.index("??")
    assert edge_words(text[:s], "εί", text[s + 2:]) == []
    assert word_features(vocab, text, s, 2, "εί") == (0, 0)
