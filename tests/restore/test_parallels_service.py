"""The restorer's parallels service without an index: validated settings, the rerank by
attestation counts, and restoration that goes on when the rerank's index is missing."""

from __future__ import annotations

import logging

import pytest

from stoicheia_spacy.errors import ConfigError, ParallelsIndexError
from stoicheia_spacy.restore.parallels import CandidateParallels, rerank
from stoicheia_spacy.restore.results import Candidate, Restoration

LINE = "ἐὰν δὲ μὴ ἀποδῶ, ἀποτείσω [.3] ἐπίτιμον"


def item() -> Restoration:
    start = LINE.index("[.3]")
    cands = (Candidate("και", -22.4, 0.6), Candidate("σοι", -23.1, 0.3), Candidate("μεν", -24.2, 0.1))
    return Restoration(start, start + 4, 0, 3, 3, "lost", cands, 0.7, True, False)


def test_rerank_by_attestation_moves_the_attested_reading_up() -> None:
    out = rerank(item().candidates, [0, 12, 0], 1.0)
    assert [c.text for c in out] == ["σοι", "και", "μεν"]
    assert (out[0].score, out[0].share) == (-23.1, 0.3)  # the model's own score and share stay
    assert [c.text for c in rerank(item().candidates, [0, 0, 0], 4.0)] == ["και", "σοι", "μεν"]


def test_a_reranked_away_top_is_not_confident() -> None:
    from stoicheia_spacy.parallels.search import Attestation

    service = CandidateParallels(rerank=1.0)
    out = service.apply(None, item(), [Attestation((), 0), Attestation((), 12), Attestation((), 0)])  # type: ignore[arg-type]
    assert out.top is not None and out.top.text == "σοι"
    assert (out.confident, out.confidence) == (False, 0.3)


@pytest.mark.parametrize("bad", [{"top": -1}, {"context": True}, {"rerank": -1.0}, {"rerank": float("nan")}])
def test_bad_settings_are_config_errors(bad: dict) -> None:
    with pytest.raises(ConfigError):
        CandidateParallels(**bad)


def test_the_rerank_alone_without_an_index_leaves_restoration_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    service = CandidateParallels(rerank=4.0, package="stoicheia_no_such_data")
    with caplog.at_level(logging.WARNING):
        assert service([LINE], [[item()]]) == [[item()]]
    with pytest.raises(ParallelsIndexError, match="stoicheia-no-such-data"):
        CandidateParallels(top=2, package="stoicheia_no_such_data")([LINE], [[item()]])
