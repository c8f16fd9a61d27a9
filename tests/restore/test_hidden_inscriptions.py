"""Hidden-width inscription gaps with the inscriptions' own sources (Run 16): through the restorer's
combination with the default config's settings and the installed data package (its 8-gram pair,
parallels index and ``domains/inscription``), a formula of a real inscription comes back at its
own width (skipped where the lexicon data package is not installed)."""

from __future__ import annotations

import dataclasses
import importlib.util
import unicodedata
from importlib import resources
from pathlib import Path

import pytest
from thinc.api import Config

from stoicheia_spacy.accent.lexasset import find_domain_sources, find_parallels
from stoicheia_spacy.errors import ParallelsIndexError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.parallels.index import ParallelIndex
from stoicheia_spacy.restore import build_queries
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.domain_sources import load_domain_sources, serves
from stoicheia_spacy.restore.infgram import Evidence
from stoicheia_spacy.restore.kneser_ney import load_kn
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

CONFIG = Path(__file__).resolve().parents[2] / "assets" / "models" / "grc_stoicheia_doc_clean" / "config.cfg"
#: (text with a hidden-width gap, its reading): formulae of the Black Sea and Palestine inscriptions
CASES = [
    ("Μνημεῖον Ἰωσήφου ἀποθανόντος ἐτῶν μʹ θάρσει [...] ἀθάνατος", "οὐδεὶς"),
    ("Μνημεῖον Ἰωσήφου ἀποθανόντος ἐτῶν μʹ θάρσει οὐδεὶς [...]", "ἀθάνατος"),
    ("Μνημεῖον Ἰωσήφου ἀποθανόντος [...] μʹ ἐν μηνὶ Δίου", "ἐτῶν"),
]


@pytest.fixture(scope="module")
def settings() -> RestorerSettings:
    block = dict(Config().from_disk(CONFIG, interpolate=False)["components"]["stoicheia_restorer"]["settings"])
    block.pop("@misc", None)
    return RestorerSettings.from_dict(block)


@pytest.fixture(scope="module")
def sources(settings: RestorerSettings):
    if importlib.util.find_spec("stoicheia_lexicon_grc") is None:
        pytest.skip("the lexicon data package is not installed (make lexicon)")
    path = Path(str(resources.files("stoicheia_lexicon_grc") / "kn_lm8.npz"))
    try:
        index = ParallelIndex(find_parallels())
        folder = find_domain_sources("inscription")
    except ParallelsIndexError as exc:
        pytest.skip(f"no parallels index or inscription sources installed: {exc}")
    if not path.is_file():
        pytest.skip("the data package has no kn_lm8.npz")
    src = load_domain_sources(folder, (settings.domain_source_weights or {})["inscription"])
    return load_kn(path), index, src


def query(text: str):
    [target] = build_queries(parse_gaps(text))
    return target.query


def restore(settings: RestorerSettings, sources, text: str):
    lm, index, src = sources
    c = settings
    src = dataclasses.replace(src, weights=(c.domain_source_weights or {})["inscription"])
    prior = WidthPrior(c.rank, float(c.length_bonus), tuple(c.width_log_prior))
    ev = Evidence(index, (c.infgram_weights or {})["inscription"], domain=src)
    [cands] = restore_combined(None, [query(text)], c, lm, prior=prior, temperature=c.temperatures_for("inscription"),
                               domains=["inscription"], evidence=[ev])
    return cands


@pytest.mark.parametrize(("text", "reading"), CASES)
def test_a_hidden_width_inscription_formula_comes_back_at_its_own_width(settings, sources, text, reading) -> None:
    q = query(text)
    assert q.widths is None and serves(sources[2], q, settings.max_letters)  # the config fits the unknown bucket
    cands = restore(settings, sources, text)
    assert cands[0].width == len(reading) and bare(cands[0].text) == bare(reading)
    assert len({x.width for x in cands}) > 1  # the other widths compete, and lose


def test_without_the_unknown_rows_the_formula_is_lost(settings, sources) -> None:
    text, reading = CASES[1]
    tables = {}
    for name in ("kn_domain_weights", "infgram_weights", "domain_source_weights"):
        table = dict(getattr(settings, name))
        table["inscription"] = {k: v for k, v in table["inscription"].items() if k != "unknown"}
        tables[name] = table
    before = dataclasses.replace(settings, **tables)  # Run 14's tables: hidden widths get no domain sources
    assert not serves(dataclasses.replace(sources[2], weights=tables["domain_source_weights"]["inscription"]),
                      query(text), settings.max_letters)
    assert bare(restore(before, sources, text)[0].text) != bare(reading)


def bare(text: str) -> str:
    s = unicodedata.normalize("NFD", text.lower().replace("ς", "σ"))
    return "".join(ch for ch in s if ch.isalpha() and not unicodedata.combining(ch))
