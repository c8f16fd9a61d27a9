"""Gaps of hidden width (``[...]``) read from the parallels index (Run 15): one search of the context
serves every width, only buckets fitted for it get the index's candidates, and a real formula
comes back at its own length (skipped where the lexicon data package with its index is not installed)."""

from __future__ import annotations

import dataclasses

from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.parallels.index import ParallelIndex, letters_of
from stoicheia_spacy.restore import build_queries
from stoicheia_spacy.restore.combine import restore_combined
from stoicheia_spacy.restore.infgram import Evidence, evidence_widths, gap_evidence, occurrences
from stoicheia_spacy.restore.parallels import CandidateParallels
from stoicheia_spacy.restore.results import Candidate, Restoration
from stoicheia_spacy.restore.settings import RestorerSettings
from stoicheia_spacy.restore.widths import WidthPrior

# a camel sale (the perfect infinitive πεπρακέναι of every sale), its width hidden: [...]
SALE = "Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρα[...] σοι κάμηλον θήλειαν"
KNOWN = {"default": [0.8, 8.0], "1-3": [0.3, 8.0], "4-6": [1.6, 4.0], "7-10": [1.2, 4.0]}
#: Run 15's papyrus weights for hidden widths (metrics_run15_hidden_papyri.json, ``weights``; the default config)
HIDDEN = {**KNOWN, "unknown": [1.6, 0.0]}


def query(text: str):
    [target] = build_queries(parse_gaps(text))
    return target.query


def test_one_search_serves_every_width_as_the_known_width_search_does(index: ParallelIndex) -> None:
    left, right = letters_of("ὁμολογῶ πεπρα"), letters_of("σοι κάμηλον θήλειαν")
    known, _, _, docs_k = occurrences(index, left, right, 5, space_before=True, space_after=False)
    every, _, _, docs_e = occurrences(index, left, right, range(1, 11), space_before=True, space_after=False)
    assert "κεναι" in every and {len(t) for t in every} > {5}  # several widths at once
    # the width-5 texts of the one search are exactly those of the known-width search
    assert sorted(t for t in every if len(t) == 5) == sorted(known)
    assert len(docs_e) == len(every) and len(docs_k) == len(known)


def test_hidden_widths_get_the_index_only_where_a_bucket_was_fitted_for_them(index: ParallelIndex) -> None:
    hidden = query(SALE)
    assert hidden.widths is None
    assert evidence_widths(Evidence(index, KNOWN), hidden) == ()  # Run 13's tables: known widths only
    assert gap_evidence(Evidence(index, KNOWN), hidden) == {}
    assert evidence_widths(Evidence(index, HIDDEN), hidden, max_letters=10) == tuple(range(1, 11))
    found = gap_evidence(Evidence(index, HIDDEN), hidden)
    best = max(found, key=lambda t: (found[t].context, found[t].docs))
    assert best == "κεναι" and found["κεναι"].docs >= 3
    known = dataclasses.replace(hidden, widths=(5,))
    assert evidence_widths(Evidence(index, KNOWN), known) == (5,)
    ranged = dataclasses.replace(hidden, widths=(4, 5, 6))
    assert evidence_widths(Evidence(index, KNOWN), ranged) == ()
    assert evidence_widths(Evidence(index, {"range": [1.0, 0.0]}), ranged) == (4, 5, 6)


def test_a_hidden_width_formula_comes_back_at_its_own_length(index: ParallelIndex, kn) -> None:
    settings = RestorerSettings(max_letters=10, kn_weights={"default": [0.0, 1.0, 1.0, 0.0]},
                                kn_domain_weights={"papyrus": {"default": [0.0, 1.0, 1.5, 0.0],
                                                               "unknown": [0.0, 1.0, 0.5, 0.7]}},
                                infgram_weights={"papyrus": HIDDEN})
    prior = WidthPrior("total", -0.7, ())  # the shipped config's length bonus
    [cands] = restore_combined(None, [query(SALE)], settings, kn, prior=prior, temperature=4.8,
                               domains=["papyrus"], evidence=[Evidence(index, HIDDEN)])
    assert cands[0].text == "κεναι" and cands[0].width == 5
    assert len({c.width for c in cands}) > 1  # the other widths compete, and lose


def test_the_rerank_leaves_a_hidden_gap_the_index_scored_in_its_order(index: ParallelIndex) -> None:
    start = SALE.index("[...]")
    cands = (Candidate("καμεν", -22.6, 0.9), Candidate("κεναι", -35.5, 0.03), Candidate("γμενα", -38.9, 0.01))
    gap = Restoration(start=start, end=start + 5, gap_index=0, min_width=1, max_width=None, kind="lacuna",
                      candidates=cands, confidence=0.9, confident=True, abstain=False)
    service = CandidateParallels(rerank=1000.0, candidates=3)
    [[kept]] = service([SALE], [[gap]], scored=[True], scored_hidden=[True])
    assert [c.text for c in kept.candidates] == ["καμεν", "κεναι", "γμενα"] and kept.confident
    [[moved]] = service([SALE], [[gap]], scored=[True], scored_hidden=[False])  # Run 13: known widths only
    assert moved.candidates[0].text == "κεναι"  # attested in other sales: the rerank moves it up
