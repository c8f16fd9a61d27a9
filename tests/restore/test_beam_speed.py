"""The decoder's speed options on real Greek: length-grouped scoring runs no padding and
changes no output; parallel unmasking and reading word breaks without a last forward save
forwards and keep the exact best filling of a context-free table model."""

from __future__ import annotations

import pytest
import torch
from test_beam import CONTEXT, GAP_AT, TableModel, _brute_force, _table

from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, planes_to_tensors
from stoicheia_spacy.codec import encode_planes
from stoicheia_spacy.errors import DecodingError
from stoicheia_spacy.restore import GapQuery, ModelScorer, beam_search


@pytest.mark.parametrize("pad_ratio", [1.0, 1.5])
def test_length_grouped_scoring_equals_padded_forwards_row_by_row(pad_ratio: float) -> None:
    torch.manual_seed(0)
    model = StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()
    texts = ["τῆι βουλῆι", "ἔδοξε τῶι δήμωι", "Κόμων Μουσαίου τοῦ Ἡρακλείτου", "καὶ"]
    batch = planes_to_tensors([encode_planes(t) for t in texts])
    batch.pop("lengths")
    scorer = ModelScorer(model, max_tokens=16 if pad_ratio == 1 else 8192, pad_ratio=pad_ratio)
    letters, breaks = scorer(batch)
    assert scorer.forwards == 1
    real = sum(len(encode_planes(t)) for t in texts)
    if pad_ratio == 1:
        assert scorer.tokens == real  # no padding was run
    else:  # the two short sentences share one padded call; padding is its own segment
        assert real < scorer.tokens <= 1.5 * real
        assert len(scorer._groups((batch["input_ids"] != 0).sum(1))) < len(texts)
    for row, text in enumerate(texts):
        one = planes_to_tensors([encode_planes(text)])
        one.pop("lengths")
        ref_letters, ref_breaks = ModelScorer(model)(one)
        n = ref_letters.shape[1]
        assert torch.allclose(letters[row, :n], ref_letters[0], atol=1e-5)
        assert torch.allclose(breaks[row, :n], ref_breaks[0], atol=1e-5)
        assert (letters[row, n:] == 0).all()


def test_parallel_unmasking_commits_several_letters_per_forward() -> None:
    table = _table()
    query = GapQuery(CONTEXT, GAP_AT, (4,))
    one = ModelScorer(TableModel(table))
    [exact] = beam_search(one, [query], beam=20)
    two = ModelScorer(TableModel(table))
    [fast] = beam_search(two, [query], beam=20, unmask=2)
    assert one.forwards == 4 + 1
    assert two.forwards == 2 + 1  # four letters in two steps, then the word breaks
    # slots are independent in a context-free table: the best fillings are still exact
    best = _brute_force(table, [GAP_AT + i for i in range(4)], 3)
    assert [c.text for c in fast[:3]] == [c.text for c in exact[:3]] == [t for t, _ in best]
    [hidden] = beam_search(ModelScorer(TableModel(table)), [GapQuery(CONTEXT, GAP_AT, None)], beam=20,
                           max_letters=5, unmask=3, n_best=200)
    assert {len(c.text) for c in hidden} >= {1, 2, 3, 4, 5}


def test_breaks_from_the_last_step_save_the_final_forward() -> None:
    table = _table(3)
    breaks = torch.full((40,), -30.0)
    breaks[GAP_AT + 1] = 5.0  # a break after the 2nd gap letter
    query = GapQuery(CONTEXT, GAP_AT, (4,))
    full = ModelScorer(TableModel(table, breaks))
    [a] = beam_search(full, [query], beam=10)
    last = ModelScorer(TableModel(table, breaks))
    [b] = beam_search(last, [query], beam=10, final_forward=False)
    assert last.forwards == full.forwards - 1
    # the table's break head ignores the letters, so both reads agree exactly
    assert [(c.text, round(c.logprob, 9)) for c in a] == [(c.text, round(c.logprob, 9)) for c in b]
    assert b[0].text[2] == " "
    with pytest.raises(DecodingError):
        beam_search(full, [query], unmask=0)
