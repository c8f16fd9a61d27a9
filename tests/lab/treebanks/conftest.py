"""Small real samples of each treebank (a few files each) shared by the treebank tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from stoicheia_lab.treebanks.harmonise import Sentence, harmonise
from stoicheia_lab.treebanks.readers import SOURCES, RawSentence, iter_source

#: A few small documents per source (member names inside the mirrored archives).
SAMPLE_DOCS: dict[str, list[str]] = {
    "agdt": [
        "v2.1/Greek/texts/tlg0540.tlg015.perseus-grc1.tb.xml",
        "v2.1/Greek/texts/tlg0540.tlg023.perseus-grc1.tb.xml",
        "v2.1/Greek/texts/tlg0540.tlg001.perseus-grc1.tb.xml",
    ],
    "homer": ["v1.6/greek/data/tlg0012.tlg002.perseus-grc1_7.tb.xml"],
    "gorman": ["xml versions/Lysias 23 bu1.xml", "xml versions/Lysias 1 bu1.xml"],
    "pedalion": ["public/xml/mimn.xml", "public/xml/theoc.xml", "public/xml/papyri.xml"],
}


@pytest.fixture(scope="session")
def raw_samples(shared_data: Path) -> dict[str, list[RawSentence]]:
    return {
        name: list(iter_source(shared_data, name, documents=docs))
        for name, docs in SAMPLE_DOCS.items()
    }


@pytest.fixture(scope="session")
def harmonised_samples(raw_samples: dict[str, list[RawSentence]]) -> dict[str, list[Sentence]]:
    out: dict[str, list[Sentence]] = {}
    for name, raws in raw_samples.items():
        out[name] = [h for h in (harmonise(r) for r in raws) if h is not None]
    assert set(out) == set(SOURCES)
    return out
