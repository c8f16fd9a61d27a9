"""UD relations (issue 42, item 4): the parser's ``scheme = "ud"`` rewrites its AGDT trees to
Universal Dependencies (content words head: ``case``, ``cop``, ``mark``, ``cc``/``conj``),
CoNLL-U under it is a valid UD tree, ``stoicheia parse --scheme ud`` writes it, and the default
scheme's output is unchanged."""

from __future__ import annotations

from typing import Any

import conllu
import pytest
from spacy.tokens import Doc
from typer.testing import CliRunner

from stoicheia_spacy.cli import app
from stoicheia_spacy.errors import ConfigError
from stoicheia_spacy.morph.agdt_ud_tree import convert_tree
from stoicheia_spacy.morph.conllu import to_conllu
from stoicheia_spacy.morph.settings import ParserSettings

#: Universal relations (CoNLL-U ``DEPREL`` before a ``:`` subtype).
UD_RELATIONS = frozenset(
    "acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det discourse dislocated "
    "expl fixed flat goeswith iobj list mark nmod nsubj nummod obj obl orphan parataxis punct reparandum "
    "root vocative xcomp".split()
)

# ὁ δὲ ἀνὴρ ἐν τῇ πόλει σοφός ἐστιν · in its AGDT 2.1 annotation (εἰμί the root, ἐν heading πόλει)
WORDS = ["ὁ", "δὲ", "ἀνὴρ", "ἐν", "τῇ", "πόλει", "σοφός", "ἐστιν", "·"]
LEMMAS = ["ὁ", "δέ", "ἀνήρ", "ἐν", "ὁ", "πόλις", "σοφός", "εἰμί", "·"]
UPOS = ["DET", "ADV", "NOUN", "ADP", "DET", "NOUN", "ADJ", "AUX", "PUNCT"]
FEATS = ["Case=Nom|Gender=Masc|Number=Sing", "", "Case=Nom|Gender=Masc|Number=Sing", "",
         "Case=Dat|Gender=Fem|Number=Sing", "Case=Dat|Gender=Fem|Number=Sing", "Case=Nom|Gender=Masc|Number=Sing",
         "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin|Voice=Act", ""]
HEADS = [3, 8, 8, 8, 6, 4, 8, 0, 8]
RELS = ["ATR", "AuxY", "SBJ", "AuxP", "ATR", "ADV", "PNOM", "PRED", "AuxK"]
SENTENCE = "ὁ δὲ ἀνὴρ ἐν τῇ πόλει σοφός ἐστιν· καὶ οἱ πολῖται εἰς τὴν ἀγορὰν ἦλθον καὶ ἔλεγον."


def _check_tree(heads: list[int]) -> None:
    assert heads.count(0) == 1
    for start in range(1, len(heads) + 1):
        seen, k = set(), start
        while k:
            assert k not in seen, f"cycle through word {k}"
            seen.add(k)
            k = heads[k - 1]


def test_preposition_and_copula_become_case_and_cop_under_ud() -> None:
    heads, rels = convert_tree(HEADS, RELS, LEMMAS, UPOS, FEATS)
    _check_tree(heads)
    assert heads[6] == 0 and rels[6] == "root"  # the predicate noun heads, not εἰμί
    assert (heads[7], rels[7]) == (7, "cop")
    assert (heads[3], rels[3]) == (6, "case")  # ἐν hangs on πόλει
    assert (heads[5], rels[5]) == (7, "obl")
    assert (heads[2], rels[2]) == (7, "nsubj")  # the subject moves from εἰμί to σοφός
    assert (heads[8], rels[8]) == (7, "punct")
    assert rels[0] == "det" and rels[1] == "advmod"


def test_coordination_first_conjunct_heads_under_ud() -> None:
    # ἦλθον καὶ ἔλεγον: AGDT hangs both verbs (PRED_CO) on καί (COORD)
    words = ["ἦλθον", "καὶ", "ἔλεγον", "."]
    heads, rels = convert_tree([2, 0, 2, 2], ["PRED_CO", "COORD", "PRED_CO", "AuxK"], ["ἔρχομαι", "καί", "λέγω", "."],
                               ["VERB", "CCONJ", "VERB", "PUNCT"], ["VerbForm=Fin"] * 3 + [""])
    assert len(words) == len(heads)
    assert (heads, rels) == ([0, 1, 1, 1], ["root", "cc", "conj", "punct"])


def test_ud_scheme_needs_the_own_decoder() -> None:
    assert ParserSettings(scheme="ud").scheme == "ud"
    with pytest.raises(ConfigError, match="scheme"):
        ParserSettings(scheme="stanford")
    with pytest.raises(ConfigError, match="own decoder"):
        ParserSettings(scheme="ud", decode="research")


@pytest.fixture(scope="module")
def parsed(default_parts: Any) -> dict[str, list[Doc]]:
    """The default heads' parse of SENTENCE in both schemes (the parser switched back after)."""
    nlp = default_parts("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser")
    parser = nlp.get_pipe("stoicheia_parser")
    out: dict[str, list[Doc]] = {}
    for scheme in ("agdt", "ud", "agdt"):
        parser.configure(scheme=scheme)
        out.setdefault(scheme, []).append(nlp(SENTENCE))
    parser.configure(scheme="agdt")
    return out


def test_default_heads_write_case_and_cop_under_ud(parsed: dict[str, list[Doc]]) -> None:
    doc: Doc = parsed["ud"][0]
    by_form = {t.text: t for t in doc}
    assert by_form["ἐν"].dep_ == "case" and by_form["ἐν"].head.text == "πόλει"
    assert by_form["εἰς"].dep_ == "case" and by_form["εἰς"].head.text == "ἀγορὰν"
    assert by_form["ἐστιν"].dep_ == "cop" and by_form["ἐστιν"].head.text == "σοφός"
    assert by_form["ἀνὴρ"].head.text == "σοφός"
    assert {t.dep_ for t in doc} <= UD_RELATIONS


def test_conllu_under_ud_is_a_valid_ud_tree(parsed: dict[str, list[Doc]]) -> None:
    sents = conllu.parse(to_conllu(parsed["ud"][0], "ud"))
    assert sents
    for sent in sents:
        heads = [int(t["head"]) for t in sent]
        _check_tree(heads)
        assert all(t["deprel"].split(":")[0] in UD_RELATIONS for t in sent)
        assert sum(t["deprel"] == "root" for t in sent) == 1
        assert all((t["deprel"] == "root") == (t["head"] == 0) for t in sent)
        assert not any(t["deprel"] in ("case", "cop", "mark", "cc", "punct") and
                       any(int(o["head"]) == t["id"] and o["deprel"] not in ("punct", "fixed", "conj")
                           for o in sent) for t in sent), "a function word heads a content word"


def test_default_scheme_output_unchanged_by_switching(parsed: dict[str, list[Doc]]) -> None:
    first, again = parsed["agdt"]
    assert to_conllu(first) == to_conllu(again)
    assert "PRED" in {t.dep_ for t in first} and "case" not in {t.dep_ for t in first}


def test_cli_scheme_ud_writes_ud_relations() -> None:
    runner = CliRunner()
    ud = runner.invoke(app, ["parse", SENTENCE, "--scheme", "ud"])
    assert ud.exit_code == 0, ud.output
    rels = {t["deprel"] for s in conllu.parse(ud.stdout) for t in s}
    assert {"case", "cop", "root"} <= rels and rels <= UD_RELATIONS
    agdt = runner.invoke(app, ["parse", SENTENCE])
    assert agdt.exit_code == 0 and "AuxP" in agdt.stdout and "\tcase\t" not in agdt.stdout
    bad = runner.invoke(app, ["parse", SENTENCE, "--scheme", "stanford"])
    assert bad.exit_code != 0


def test_comma_heading_an_apposition_gets_no_dependents_and_the_conversion_ends() -> None:
    # a predicted tree of UD Perseus test (Herodas): the comma after καθέρματα heads the
    # apposition's members (OBJ_AP, SBJ_AP); UD punctuation heads nothing
    words = "νῦν δ̓ ἐπιβαίνει σατινέων , χρύσεα φορέων καθέρματα , πάις Κύκης , καὶ σκιαδίσκην ἐλεφαντίνην φορεῖ".split()
    heads = [3, 13, 13, 3, 13, 8, 8, 9, 13, 9, 10, 13, 0, 16, 14, 13]
    rels = ["ADV", "AuxY", "PRED_CO", "OBJ", "AuxX", "ATR", "ATR", "OBJ_AP", "AuxX", "SBJ_AP", "ATR", "AuxX",
            "COORD", "OBJ", "ATR", "PRED_CO"]
    upos = ["ADV", "ADV", "VERB", "NOUN", "PUNCT", "ADJ", "VERB", "NOUN", "PUNCT", "NOUN", "NOUN", "PUNCT",
            "CCONJ", "NOUN", "ADJ", "VERB"]
    out_heads, out_rels = convert_tree(heads, rels, [w.strip(",") for w in words], upos, [""] * len(words))
    _check_tree(out_heads)
    assert not any(out_rels[h - 1] == "punct" for h in out_heads if h)
    assert out_rels[2] == "root" and out_rels[15] == "conj"
