"""A domain's own sources (Run 14, :mod:`stoicheia_spacy.restore.domain_sources`): an 8-gram
pair, a parallels index and a word list of a few real Greek inscriptions (Zoora tombstones of IIP,
a Black Sea dedication of IOSPE) propose and score the candidates of a known-width gap; the
settings that turn them on and the domain's own calibration; a hidden-width gap gets them only
where the ``unknown`` bucket was fitted (Run 16)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from stoicheia_spacy.errors import ConfigError, ParallelsIndexError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.parallels.index import Document, ParallelIndex, build_index, letters_of
from stoicheia_spacy.restore import build_queries
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.domain_sources import (
    DomainSources,
    known_width,
    load_domain_sources,
    query_words,
    serves,
    source_widths,
    with_domain_sources,
)
from stoicheia_spacy.restore.infgram import Evidence
from stoicheia_spacy.restore.kn_beam import kn_restore
from stoicheia_spacy.restore.kneser_ney import build_kn, save_kn
from stoicheia_spacy.restore.lexicon import Vocabulary
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

# the training part: three Zoora tombstones (their formula) and a dedication
TRAIN = [
    "Μνημεῖον Ἀβραμίου ἀποθανόντος ἐτῶν λεʹ ἐν μηνὶ Δίου ἡμέρᾳ Ἀφροδίτης θάρσει οὐδεὶς ἀθάνατος",
    "Μνημεῖον Σαμουήλου ἀποθανόντος ἐτῶν κʹ ἐν μηνὶ Λῴου ἡμέρᾳ Κρόνου θάρσει οὐδεὶς ἀθάνατος",
    "Μνημεῖον Ἰακώβου ἀποθανόντος ἐτῶν μʹ ἐν μηνὶ Ξανδικοῦ θάρσει οὐδεὶς ἀθάνατος",
    "Ἀγαθῇ τύχῃ ὑπὲρ τῆς τοῦ βασιλέως νείκης καὶ αἰωνίου διαμονῆς ἡ πόλις ἀνέστησεν",
]
# a papyrus letter: the default's own 8-gram (the domain's words are not its words)
PAPYRI = ["Ἡρακλείδης Ἀπολλωνίῳ τῷ ἀδελφῷ χαίρειν πρὸ μὲν πάντων εὔχομαί σε ὑγιαίνειν",
          "ἐρρῶσθαί σε εὔχομαι ἀδελφέ ἔτους δευτέρου Φαῶφι"]
HELD_OUT = "Μνημεῖον Ὠρίωνος ἀποθανόντος ἐτῶν λʹ ἐν μηνὶ Δίου θάρσει οὐδεὶς ἀθά[.5]"
WEIGHTS = {"default": [1.0, 1.0, 0.5, 0.0, -4.0, 1.0]}


def symbols(texts: list[str]) -> list[np.ndarray]:
    from stoicheia_spacy.restore.kn_beam import text_to_symbols
    from stoicheia_spacy.restore.kneser_ney import SPACE

    out = []
    for t in texts:
        words = [text_to_symbols(w) for w in (unaccent(x) for x in t.split())]
        out.append(np.concatenate([np.append(w, SPACE) for w in words])[:-1])
    return out


def unaccent(word: str) -> str:
    import unicodedata

    plain = "".join(ch for ch in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(ch))
    return "".join(ch for ch in plain if ch.isalpha())


def document(doc_id: str, text: str) -> Document:
    words = [letters_of(w) for w in text.split()]
    words = [w for w in words if len(w)]
    space = np.concatenate([np.eye(1, len(w), len(w) - 1, dtype=bool)[0] for w in words])
    return Document(id=doc_id, source="inscription", letters=np.concatenate(words),
                    supplied=np.zeros(len(space), bool), space_after=space)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("inscription")
    build_index([document(f"iip:zoor{i:04d}", t) for i, t in enumerate(TRAIN)], root / "parallels")
    save_kn(build_kn(symbols(TRAIN), order=8), root / "kn.npz")
    Vocabulary.from_indexes([ParallelIndex(root / "parallels")]).save(root / "vocabulary.npy")
    return root


@pytest.fixture(scope="module")
def papyri_lm():
    return build_kn(symbols(PAPYRI), order=8)


def query(text: str):
    [target] = build_queries(parse_gaps(text))
    return target.query


def test_the_domain_sources_propose_the_formula(folder: Path, papyri_lm) -> None:
    src = load_domain_sources(folder, WEIGHTS)
    q = query(HELD_OUT)
    assert known_width(q) and not known_width(dataclasses.replace(q, widths=None))
    base = kn_restore(papyri_lm, [q], beam=20, far=10)[0]
    assert "νατος" not in {c.text for c in base}  # the papyri's 8-gram does not know the formula
    cands, feats = with_domain_sources(papyri_lm, q, base, src, 10)
    texts = [c.text for c in cands]
    assert "νατος" in texts and texts[: len(base)] == [c.text for c in base]
    # θάρσει οὐδεὶς ἀθά|νατος ends three tombstones: 16 letters matched on the left (the cap), none on the
    # right (the text ends), so no document holds it with 4 letters a side
    assert (feats["νατοσ"].occurrences, feats["νατοσ"].context, feats["νατοσ"].docs) == (3, 16, 0)
    assert query_words(src.vocab, q, "νατος") == (0, 1) and query_words(src.vocab, q, "νατοι") == (1, 0)


def test_restore_combined_with_the_domain_sources(folder: Path, papyri_lm) -> None:
    src = load_domain_sources(folder, WEIGHTS)
    settings = RestorerSettings(kn_weights={"default": [0.0, 1.0, 1.0, 0.0]}, domain_sources={"inscription": str(folder)},
                                domain_source_weights={"inscription": WEIGHTS})
    q = query(HELD_OUT)
    prior = WidthPrior("total", 0.0, ())
    index = src.index  # the default's index: here the inscriptions' own, no evidence weights
    plain = Evidence(index, {"default": [0.0, 0.0]})
    [before] = restore_combined(None, [q], settings, papyri_lm, prior=prior, temperature=4.0,
                                domains=["inscription"], evidence=[plain])
    [after] = restore_combined(None, [q], settings, papyri_lm, prior=prior, temperature=4.0,
                               domains=["inscription"], evidence=[dataclasses.replace(plain, domain=src)])
    assert before[0].text != "νατος" and after[0].text == "νατος"
    # the Doc's own inscription left out of the domain index: its evidence is gone, the 8-gram's stays
    own = dataclasses.replace(src, exclude=frozenset(range(len(src.index))))
    [left_out] = restore_combined(None, [q], settings, papyri_lm, prior=prior, temperature=4.0,
                                  domains=["inscription"], evidence=[dataclasses.replace(plain, domain=own)])
    assert left_out[0].logprob < after[0].logprob


def test_missing_sources_and_settings(tmp_path: Path) -> None:
    with pytest.raises(ParallelsIndexError, match="lack kn.npz"):
        load_domain_sources(tmp_path, WEIGHTS)
    with pytest.raises(ConfigError):
        RestorerSettings(domain_source_weights={"inscription": {"default": [1.0, 2.0]}})
    with pytest.raises(ConfigError):
        RestorerSettings(domain_sources={"stone": "x"})
    with pytest.raises(ConfigError):
        RestorerSettings(domain_calibration={"inscription": {"temperatures": {"1-3": 0.0}}})
    c = RestorerSettings(temperature=4.0, temperatures={"1-3": 3.8}, confidence_slopes={"1-3": 0.85},
                         confidence_biases={"1-3": 0.2}, confident_above=0.44,
                         domain_calibration={"inscription": {"temperatures": {"1-3": 4.7}, "confidence_slopes": {"1-3": 0.55},
                                                             "confidence_biases": {"1-3": 0.45}, "confident_above": 0.6}})
    assert c.temperatures_for("inscription") == {"default": 4.0, "1-3": 4.7}
    assert c.temperatures_for("papyrus") == {"default": 4.0, "1-3": 3.8}
    assert c.confidence_scaling("1-3", "inscription") == (0.55, 0.45) and c.confidence_scaling("1-3") == (0.85, 0.2)
    assert c.confident_above_for("inscription") == 0.6 and c.confident_above_for(None) == 0.44
    again = RestorerSettings.from_dict(c.to_dict())
    assert again.domain_calibration == c.domain_calibration and again.confident_above_for("inscription") == 0.6
    assert isinstance(DomainSources, type)


HIDDEN = "Μνημεῖον Ὠρίωνος ἀποθανόντος ἐτῶν λʹ ἐν μηνὶ Δίου θάρσει οὐδεὶς ἀθά[...]"


def test_hidden_widths_get_the_sources_only_where_the_unknown_bucket_was_fitted(folder: Path, papyri_lm) -> None:
    q = query(HIDDEN)
    assert q.widths is None and q.letters is None
    known_only = load_domain_sources(folder, WEIGHTS)
    assert source_widths(known_only, q) == () and not serves(known_only, q)
    base = kn_restore(papyri_lm, [q], beam=20, far=10, max_letters=10)[0]
    assert with_domain_sources(papyri_lm, q, base, known_only, 10) == (list(base), {})  # Run 14's tables: as before
    src = load_domain_sources(folder, {**WEIGHTS, "unknown": WEIGHTS["default"]})
    assert source_widths(src, q, max_letters=10) == tuple(range(1, 11)) and serves(src, q)
    assert source_widths(src, dataclasses.replace(q, widths=(4, 5, 6))) == ()  # no range bucket fitted
    cands, feats = with_domain_sources(papyri_lm, q, base, src, 10)
    texts = [c.text for c in cands]
    assert "νατος" in texts and len({len(t) for t in texts}) > 1  # the formula among texts of every width
    assert feats["νατοσ"].context == 16


def test_restore_combined_with_the_domain_sources_at_a_hidden_width(folder: Path, papyri_lm) -> None:
    # θάρσει [...] ἀθάνατος: the papyri's 8-gram never proposes οὐδεὶς; the domain's index does, at its own width
    weights = {**WEIGHTS, "unknown": [0.5, 0.5, 2.0, 4.0, -4.0, 1.0]}
    src = load_domain_sources(folder, weights)
    settings = RestorerSettings(max_letters=10, kn_weights={"default": [0.0, 1.0, 1.0, 0.0]},
                                kn_domain_weights={"inscription": {"default": [0.0, 1.0, 1.0, 0.0],
                                                                   "unknown": [0.0, 1.0, 1.0, 0.7]}},
                                domain_sources={"inscription": str(folder)},
                                domain_source_weights={"inscription": weights})
    q = query("Μνημεῖον Ὠρίωνος ἀποθανόντος ἐτῶν λʹ ἐν μηνὶ Δίου θάρσει [...] ἀθάνατος")
    prior = WidthPrior("total", -0.7, ())  # the shipped config's length bonus
    plain = Evidence(src.index, {"default": [0.0, 0.0]})
    found = {}
    for name, dom in (("before", known_only(src)), ("after", src)):
        [found[name]] = restore_combined(None, [q], settings, papyri_lm, prior=prior, temperature=4.0,
                                         domains=["inscription"], evidence=[dataclasses.replace(plain, domain=dom)])
    assert "ουδεις" not in {c.text for c in found["before"]}
    rank = [c.text for c in found["after"]].index("ουδεις")
    assert rank < 3 and found["after"][rank].width == 6 and len({c.width for c in found["after"]}) > 1


def known_only(src: DomainSources) -> DomainSources:
    return dataclasses.replace(src, weights={k: v for k, v in src.weights.items() if k != "unknown"})
