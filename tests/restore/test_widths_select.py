"""Unknown and uncertain widths, bounded cost, gap selection and the evaluation formats,
on real Greek contexts with the table model of test_beam (its best fillings are known)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_beam import CONTEXT, GAP_AT, TableModel, _table

from stoicheia_spacy.errors import DecodingError, ScoringError
from stoicheia_spacy.leiden import parse_gaps
from stoicheia_spacy.restore import GapQuery, ModelScorer, WidthPrior, beam_search, width_bucket
from stoicheia_spacy.restore.calibration import fit_prior, fit_temperatures, rerank, top_probability
from stoicheia_spacy.restore.formats import (
    ithaca_text,
    parse_chat,
    release_cer,
    release_match,
    to_chat,
)
from stoicheia_spacy.restore.select import plan, restore_targets, target_indices

CFG = {"beam_width": 5, "n_candidates": 5, "context": 32, "mode": "any", "space_ratio": 0.25,
       "elastic_slots": 12, "temperature": 1.0}


class RowCounter(ModelScorer):
    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__(module)
        self.rows = 0

    def __call__(self, batch):  # type: ignore[no-untyped-def]
        self.rows += int(batch["input_ids"].shape[0])
        return super().__call__(batch)


def test_unknown_width_enumerates_letter_counts_in_one_beam_at_bounded_cost() -> None:
    table = _table(7)
    known = RowCounter(TableModel(table))
    beam_search(known, [GapQuery(CONTEXT, GAP_AT, (6,))], beam=20)
    hidden = RowCounter(TableModel(table))
    [cands] = beam_search(hidden, [GapQuery(CONTEXT, GAP_AT, None)], beam=20, max_letters=6, n_best=50)
    # one shared beam per gap: the hidden width costs max_letters + 1 forwards, not one search per width
    assert hidden.forwards == 6 + 1
    assert hidden.rows <= 3 * known.rows
    assert {len(c.text) for c in cands} >= {1, 2, 3, 4, 5, 6}  # every letter count competes
    # a context-free table: with no prior the one-letter candidates win (fewest log-probs summed) ...
    assert len(cands[0].text) == 1
    # ... and a length bonus of 3 nats/char makes the longest win: the prior decides the width
    [long] = beam_search(ModelScorer(TableModel(table)), [GapQuery(CONTEXT, GAP_AT, None)], beam=20,
                         max_letters=6, prior=WidthPrior("total", 3.0))
    assert len(long[0].text) == 6
    assert sum(c.probability for c in long) == pytest.approx(1.0)


def test_width_prior_fit_and_rerank() -> None:
    prior = WidthPrior.fit([1, 1, 1, 2], max_width=3)
    assert prior.prior(1) > prior.prior(2) > prior.prior(3)
    assert prior.prior(7) == prior.prior(3)
    cands = [("α", -2.0, 1), ("αβγ", -4.0, 3)]
    assert rerank(cands, WidthPrior("mean"))[0][0] == "αβγ"  # -1.33/char beats -2/char
    assert rerank(cands, WidthPrior("total"))[0][0] == "α"
    best, cer = fit_prior([cands, cands], ["αβγ", "αβγ"], lambda p, g: float(p != g), widths=[3, 3], max_width=3)
    assert cer == 0.0 and rerank(cands, best)[0][0] == "αβγ"
    with pytest.raises(DecodingError):
        WidthPrior("median")


def test_temperatures_per_bucket_flatten_overconfident_buckets() -> None:
    rng = np.random.default_rng(0)
    keys = [np.array([0.0, -8.0, -9.0]) for _ in range(40)]  # raw top probability ≈ 1
    correct = list(rng.random(40) < 0.3)
    temps = fit_temperatures(keys, correct, ["1-3"] * 40)
    assert top_probability(keys[0], temps["1-3"]) == pytest.approx(0.3, abs=0.1)
    assert width_bucket((2,)) == "1-3" and width_bucket((12,)) == "11+"
    assert width_bucket((4, 5)) == "range" and width_bucket(None) == "unknown"


def test_too_wide_gaps_are_reported_and_cost_nothing() -> None:
    gapped = parse_gaps("ἔδοξεν τῆι [ca. 900] καὶ τῶι [.3] δήμωι")  # a stated width above max_width
    p = plan(gapped, max_width=64)
    assert [t.gap.min_width for t in p.too_wide] == [900]
    assert [t.gap.min_width for t in p.decode] == [3]
    # the context keeps the huge lacuna as at most `context_cap` unknown letters
    assert len(p.decode[0].query.context) < 40 + 512
    model = TableModel(_table(8, T=700))
    [items], forwards = restore_targets(model, [p], CFG)
    assert [it.status for it in items] == ["too_wide", "restored"]
    assert items[0].candidates == () and items[0].abstain
    assert len(items[1].candidates[0].text) == 3 and forwards == 3 + 1
    with pytest.raises(DecodingError):
        beam_search(ModelScorer(model), [p.too_wide[0].query], max_width=64)


def test_restore_only_and_spans_select_gaps_and_keep_the_others_unknown() -> None:
    text = "ἔδοξεν [.2] τῆι βουλῆι [.4] καὶ τῶι [---] δήμωι"
    gapped = parse_gaps(text)
    assert target_indices(gapped) == [0, 1, 2]
    only = plan(gapped, only=[1])
    assert [t.index for t in only.decode] == [1]
    ctx = only.decode[0].query.context
    assert int((np.asarray(ctx.letters) == 24).sum()) == 2 + 5  # the other gaps: 2 letters + 5 unknown slots
    start = text.index("[---]")
    by_span = plan(gapped, spans=[(start, start + 5)])
    assert [t.index for t in by_span.decode] == [2]
    assert by_span.decode[0].query.widths is None


def test_ithaca_and_chat_formats_and_the_release_normalisation() -> None:
    text = "ὁμολογῶ πεπρακέναι σοι κάμηλον θήλειαν… δευτερόβολον"
    start = text.index("πεπρακέναι")
    itext, istart = ithaca_text(text, start, 10)
    assert itext[istart : istart + 10] == "?" * 10 and itext.count("-") == 1
    record = {"id": "x", "L": 10, "start": istart, "gold": "πεπρακέναι", "text": itext}
    chat = to_chat({**record, "text": text, "start": start})
    assert "[10 letters missing]" in chat["messages"][0]["content"]
    assert chat["messages"][1]["content"] == "πεπρακεναι"
    t2, s2, n, gold = parse_chat(chat)
    assert n == 10 and t2[s2 : s2 + n] == "?" * 10 and gold == "πεπρακεναι"
    gap = [g for g in parse_gaps(t2).gaps if g.kind == "target"]
    assert len(gap) == 1 and gap[0].min_width == 10
    assert release_cer("πεπρακέναι σοι", "πεπρακέναι") == 0.0  # truncated to the reference
    assert release_match("πε πρακεναι", "πεπρακέναι")  # spaces removed, accents compared bare
    assert release_cer("ς", "σ") == 0.0
    assert release_cer("", "αβ") == 1.0
    with pytest.raises(ScoringError):
        parse_chat({"messages": [{"role": "user", "content": "no gap"}]})


def test_width_prior_fit_prefers_a_bonus_away_from_the_over_filling_edge() -> None:
    # (no width prior) two gaps of width 3 are right only in a narrow band of bonuses (just before longer
    # candidates take over); one gap of width 1 is right for every small bonus
    narrow = [("α", -2.0, 1), ("αβγ", -4.0, 3), ("αβγδεζ", -7.4, 6)]
    short = [("α", -2.0, 1), ("αβ", -2.5, 2)]
    dev, gold = [narrow, narrow, short], ["αβγ", "αβγ", "α"]

    def err(p: str, g: str) -> float:
        return float(p != g)

    raw, raw_cer = fit_prior(dev, gold, err, widths=[], smooth=0)
    assert rerank(narrow, raw)[0][0] == "αβγ" and raw_cer == pytest.approx(1 / 3)
    smoothed, cer = fit_prior(dev, gold, err, widths=[], smooth=1)
    assert rerank(short, smoothed)[0][0] == "α" and cer == pytest.approx(2 / 3)
    assert smoothed.length_bonus < raw.length_bonus
