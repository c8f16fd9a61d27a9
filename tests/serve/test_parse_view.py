"""The page's parse view shows what the CoNLL-U download writes, and its candidate table says
what its numbers are (issue 41, item 4). Run on the default pipeline, without a browser: the
displaCy SVG is drawn by the server."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
import spacy

from stoicheia_spacy.morph.conllu import to_conllu
from stoicheia_spacy.serve.render import _candidates, _parse

from .conftest import DECREE

#: Odyssey 1.1 (the demo's line) and Lysias 1.1, two more sentences with commas.
VERSE = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
LYSIAS = "περὶ πολλοῦ ἂν ποιησαίμην, ὦ ἄνδρες, τὸ τοιούτους ὑμᾶς ἐμοὶ δικαστὰς περὶ τούτου τοῦ πράγματος γενέσθαι."


@pytest.fixture(scope="module")
def nlp() -> spacy.Language:
    try:
        return spacy.load("grc_stoicheia_doc_clean")
    except OSError:
        pytest.skip("the default pipeline grc_stoicheia_doc_clean is not installed (make default-package)")


def drawn(html: str) -> list[tuple[str, str]]:
    """(word, tag) of every token displaCy drew, in order."""
    words = [unescape(w) for w in re.findall(r'class="displacy-word"[^>]*>([^<]*)<', html)]
    tags = [unescape(t) for t in re.findall(r'class="displacy-tag"[^>]*>([^<]*)<', html)]
    return list(zip(words, tags, strict=True))


def conllu_rows(doc: Any) -> list[tuple[str, str]]:
    return [(cols[1], cols[3]) for line in to_conllu(doc, "t").splitlines()
            if line and not line.startswith("#") for cols in [line.split("\t")]]


@pytest.mark.parametrize("text", [DECREE, VERSE, LYSIAS])
def test_parse_view_does_not_show_finite_verbs_as_punct(nlp: spacy.Language, text: str) -> None:
    """displaCy merged ``ἐπρυτάνευε,`` into one word tagged with the comma's PUNCT; the view now
    draws every token with its UPOS, exactly as CoNLL-U writes them."""
    doc = nlp(text)
    shown = drawn(_parse(doc))
    assert shown == conllu_rows(doc)
    assert not any(word[-1] in ",." and len(word) > 1 for word, _ in shown)
    if text == DECREE:
        assert ("ἐπρυτάνευε", "VERB") in shown and (",", "PUNCT") in shown


def test_candidate_table_labels_the_share_and_says_when_ranks_do_not_follow_the_score(nlp: spacy.Language) -> None:
    """The column said "p (calibrated)" over the share among the candidates; the calibrated
    chance belongs to the top candidate only and is said in words."""
    for text in (DECREE, "ἐὰν δὲ μὴ ἀποδῶ, ἀποτείσω [.3] ἐπίτιμον"):
        doc = nlp(text)
        item = doc._.restorations[0]
        html = _candidates(item, 1, doc.text)
        assert "calibrated)" not in html and ">share</th>" in html
        assert f"{item.confidence:.0%} calibrated chance that the top candidate is right" in html
        scores = [float(s) for s in re.findall(r"<td>(-?\d+\.\d\d)</td></tr>", html)]
        assert scores == [round(c.score, 2) for c in item.candidates]  # the restorer's order: its top is shown
        reordered = "which attested parallels changed" in html
        assert reordered == (scores != sorted(scores, reverse=True))  # ranks follow log p, or the page says not


@pytest.mark.parametrize("text", [VERSE, "ὅτι μὲν ὑμεῖς, ὦ ἄνδρες Ἀθηναῖοι, πεπόνθατε ὑπὸ τῶν ἐμῶν κατηγόρων, οὐκ οἶδα."])
def test_demo_and_parse_agree_on_the_same_line(nlp: spacy.Language, text: str) -> None:
    """The demo (the whole pipeline) tagged ``μοῦσα`` VERB / ``μόνος`` where ``stoicheia parse``
    (encoder and morphosyntax only) says NOUN / ``μοῦσα``: the accentuator's norm ``Μοῦσα`` (a
    predicted capital) changed the NORM the morphologizer embeds. Norms are lower case now."""
    from stoicheia_spacy.cli.loading import load_for

    full, part = nlp(text), load_for("parse")(text)
    assert [(t.pos_, t.tag_, t.lemma_, t.head.i, t.dep_) for t in full] == \
        [(t.pos_, t.tag_, t.lemma_, t.head.i, t.dep_) for t in part]
    assert all(t.norm_ == t.norm_.lower() for t in full)
    if text == VERSE:
        assert (full[4].pos_, full[4].lemma_) == ("NOUN", "μοῦσα")
