"""Beam search on a toy model whose logits are a fixed table: the best candidate is known."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from stoicheia_spacy.alphabet import ALPHABET, BND_UNKNOWN, MASK_ID
from stoicheia_spacy.codec import CharPlanes, encode_planes
from stoicheia_spacy.errors import DecodingError
from stoicheia_spacy.restore import GapQuery, ModelScorer, beam_search, letter_counts


class TableModel(torch.nn.Module):
    """Letter logits depend only on the row position (a fixed (T, 27) table); the
    boundary head says 'no break' everywhere except where ``breaks`` says so."""

    def __init__(self, table: torch.Tensor, breaks: torch.Tensor | None = None) -> None:
        super().__init__()
        self.table = torch.nn.Parameter(table, requires_grad=False)
        self.breaks = breaks
        self.seen: list[torch.Tensor] = []
        self.seen_boundary: list[torch.Tensor] = []

    def forward(self, input_ids, boundary, dia, punct, *, seg_id=None, **_):
        self.seen.append(input_ids.clone())
        self.seen_boundary.append(boundary.clone())
        B, T = input_ids.shape
        char = self.table[:T][None].expand(B, T, -1)
        bnd = torch.full((B, T, 3), -30.0)
        bnd[..., 0] = 0.0
        if self.breaks is not None:
            bnd[:, :, 1] = self.breaks[:T][None]
        return SimpleNamespace(char=char, boundary=bnd)


CONTEXT = encode_planes("τῆι βουλῆι δήμωι")  # 14 letters
GAP_AT = 7  # the gap sits after "τηιβουλ"


def _table(seed: int = 0, T: int = 40) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    table = torch.randn(T, 27, generator=gen) * 2.0
    table[:, 24:] = -1e4  # MASK, BLANK and PAD never predicted
    return table


def _brute_force(table: torch.Tensor, positions: list[int], top: int) -> list[tuple[str, float]]:
    lp = torch.log_softmax(table[positions][:, :24].double(), dim=-1)
    scored = []
    for letters in itertools.product(range(24), repeat=len(positions)):
        scored.append((float(sum(lp[i, c] for i, c in enumerate(letters))), letters))
    scored.sort(key=lambda item: -item[0])
    out = []
    for s, letters in scored[:top]:
        text = "".join(ALPHABET[c] for c in letters)
        out.append((text[:-1] + "ς" if text.endswith("σ") else text, s))
    return out


def test_known_width_beam_finds_the_exact_best_and_ranks_like_brute_force() -> None:
    table = _table()
    model = TableModel(table)
    scorer = ModelScorer(model)
    query = GapQuery(CONTEXT, GAP_AT, (3,))
    [cands] = beam_search(scorer, [query], beam=20, n_best=20)
    expected = _brute_force(table, [GAP_AT, GAP_AT + 1, GAP_AT + 2], 20)
    # with a context-free table, the best fillings are exact: the top 20 are found in order
    assert [c.text for c in cands[:5]] == [t for t, _ in expected[:5]]
    for cand, (text, lp) in zip(cands, expected, strict=False):
        if cand.text == text:
            assert cand.logprob == pytest.approx(lp, abs=1e-6)
    assert len({c.text for c in cands}) == len(cands)  # deduplicated
    scores = [c.score for c in cands]
    assert scores == sorted(scores, reverse=True)
    assert cands[0].score == pytest.approx(cands[0].logprob)  # default rank "total", no prior
    assert sum(c.probability for c in cands) == pytest.approx(1.0)
    # 3 letter steps + 1 boundary forward
    assert scorer.forwards == 4


class Recording(ModelScorer):
    """Keeps the batches the decoder asks about (the model itself sees them grouped by length)."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__(module)
        self.seen: list[dict[str, torch.Tensor]] = []

    def __call__(self, batch):  # type: ignore[no-untyped-def]
        self.seen.append(batch)
        return super().__call__(batch)


def test_gap_slots_are_mask_with_unknown_planes_and_fills_are_committed_one_per_step() -> None:
    scorer = Recording(TableModel(_table(1)))
    beam_search(scorer, [GapQuery(CONTEXT, GAP_AT, (2,), left_open=True)], beam=3)
    first = scorer.seen[0]["input_ids"]
    # two templates (2 letters; 1 letter + a break at the open left edge), one hypothesis each
    assert first.shape[0] == 2
    assert (first[0, GAP_AT : GAP_AT + 2] == MASK_ID).all()
    assert (first[1, GAP_AT] == MASK_ID) and (first[1, GAP_AT + 1] != MASK_ID)
    bnd = scorer.seen[0]["boundary"]
    assert (bnd[0, GAP_AT - 1 : GAP_AT + 2] == BND_UNKNOWN).all()  # open left edge is an output
    assert (bnd[0, : GAP_AT - 1] != BND_UNKNOWN).all()
    masks_per_step = [int((b["input_ids"][:, GAP_AT : GAP_AT + 2] == MASK_ID).sum(1).max()) for b in scorer.seen[:2]]
    assert masks_per_step == [2, 1]
    assert scorer.forwards == 3
    # the model ran the two rows (15 and 16 letters) in one call padded to 16 (pad_ratio 1.5)
    assert tuple(scorer.module.seen[0].shape) == (2, 16)


def test_all_gaps_share_one_forward_per_step() -> None:
    model = TableModel(_table(2))
    scorer = ModelScorer(model)
    queries = [GapQuery(CONTEXT, 2, (1,)), GapQuery(CONTEXT, GAP_AT, (4,)), GapQuery(CONTEXT, 12, (2,))]
    results = beam_search(scorer, queries, beam=5, n_best=5)
    assert scorer.forwards == 4 + 1  # max L steps + boundary read
    assert [len(r[0].text) for r in results] == [1, 4, 2]


def test_word_breaks_count_toward_the_width() -> None:
    table = _table(3)
    breaks = torch.full((40,), -30.0)
    breaks[GAP_AT + 1] = 5.0  # the boundary head insists on a break after the 2nd gap letter
    model = TableModel(table, breaks)
    [cands] = beam_search(ModelScorer(model), [GapQuery(CONTEXT, GAP_AT, (4,))], beam=10)
    top = cands[0]
    assert len(top.text) == 4
    assert top.text[2] == " "  # 3 letters + 1 space = 4 characters
    assert all(len(c.text) == 4 for c in cands)


def test_uncertain_width_ranks_by_mean_logprob_and_elastic_width_stops_at_blank() -> None:
    table = _table(4)
    [ranged] = beam_search(ModelScorer(TableModel(table)), [GapQuery(CONTEXT, GAP_AT, (2, 3, 4))], beam=5)
    assert {len(c.text) for c in ranged} <= {2, 3, 4}
    assert [c.score for c in ranged] == sorted((c.score for c in ranged), reverse=True)
    elastic_table = table.clone()
    elastic_table[GAP_AT + 2 :, 25] = 50.0  # BLANK is certain from the 3rd slot on
    [elastic] = beam_search(ModelScorer(TableModel(elastic_table)), [GapQuery(CONTEXT, GAP_AT, None)],
                            beam=5, elastic_slots=6, unknown="elastic")
    assert len(elastic[0].text) == 2


def test_letter_counts_and_bad_queries() -> None:
    assert letter_counts(1, True, True) == [1]
    assert letter_counts(4, False, False) == [4, 3]  # 3 letters + 1 inner space
    assert letter_counts(2, False, False) == [2]  # one letter cannot hold an inner space
    assert letter_counts(2, True, False) == [2, 1]
    with pytest.raises(DecodingError):
        GapQuery(CONTEXT, 99, (3,))
    with pytest.raises(DecodingError):
        GapQuery(CONTEXT, 0, (0,))
    with pytest.raises(DecodingError):
        beam_search(ModelScorer(TableModel(_table())), [GapQuery(CONTEXT, 0, (1,))], mode="random")  # type: ignore[arg-type]
    assert beam_search(ModelScorer(TableModel(_table())), []) == []


def test_window_crops_context() -> None:
    long = CharPlanes.concat([CONTEXT] * 20)
    model = TableModel(_table(5, T=400))
    beam_search(ModelScorer(model), [GapQuery(long, 140, (2,))], beam=2, context=16)
    assert model.seen[0].shape[1] == 16 + 2 + 16
    assert int(np.asarray(long.boundary)[139]) != BND_UNKNOWN
