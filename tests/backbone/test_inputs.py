"""planes_to_tensors batches codec output into padded model inputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from stoicheia_spacy import alphabet
from stoicheia_spacy.backbone import StoicheiaConfig, StoicheiaEncoder, planes_to_tensors
from stoicheia_spacy.errors import InvalidInputError

from .helpers import ILIAD_1, ODYSSEY_1, greek_letter_ids


@dataclass
class StandInPlanes:
    """Minimal stand-in with the agreed CharPlanes fields (used when the codec is absent)."""

    letters: np.ndarray
    boundary: np.ndarray
    diacritics: np.ndarray
    capitals: np.ndarray
    punctuation: np.ndarray
    offsets: np.ndarray

    def __len__(self) -> int:
        return len(self.letters)


def _stand_in_encode(text: str) -> StandInPlanes:
    ids = np.array(greek_letter_ids(text), dtype=np.uint8)
    n = len(ids)
    bnd = np.zeros(n, dtype=np.uint8)
    bnd[-1] = alphabet.BND_SENT_END
    return StandInPlanes(ids, bnd, np.zeros(n, np.uint8), np.zeros(n, np.uint8),
                         np.zeros(n, np.uint8), np.arange(n, dtype=np.int64))


def _encoder() -> Callable[[str], object]:
    try:
        from stoicheia_spacy.codec import encode_planes
    except ImportError:  # codec not merged yet: the agreed interface, by hand
        return _stand_in_encode
    return encode_planes


def test_batches_with_pad_and_own_segment() -> None:
    encode = _encoder()
    docs = [encode(ILIAD_1), encode(ODYSSEY_1)]
    n0, n1 = len(docs[0]), len(docs[1])  # type: ignore[arg-type]
    batch = planes_to_tensors(docs)
    T = max(n0, n1)
    for key in ("input_ids", "boundary", "dia", "punct", "cap", "seg_id"):
        assert batch[key].shape == (2, T) and batch[key].dtype == torch.long
    assert batch["lengths"].tolist() == [n0, n1]
    short = 0 if n0 < n1 else 1
    n = min(n0, n1)
    assert (batch["input_ids"][short, n:] == alphabet.PAD_ID).all()
    assert (batch["seg_id"][short, n:] == 1).all() and (batch["seg_id"][short, :n] == 0).all()
    assert (batch["boundary"][short, n:] == alphabet.BND_UNKNOWN).all()
    assert batch["input_ids"][0, :n0].tolist() == np.asarray(docs[0].letters).tolist()  # type: ignore[attr-defined]
    assert batch["input_ids"][0, 0].item() == alphabet.ALPHABET.index("μ")


def test_pad_to_and_model_consumes_it() -> None:
    encode = _encoder()
    batch = planes_to_tensors([encode(ILIAD_1)], pad_to=128)
    assert batch["input_ids"].shape == (1, 128)
    torch.manual_seed(0)
    model = StoicheiaEncoder(StoicheiaConfig.preset("tiny")).eval()
    n = int(batch["lengths"][0])
    with torch.no_grad():
        padded = model(**{k: batch[k] for k in ("input_ids", "boundary", "dia", "punct", "seg_id")})
        plain = model(**{k: batch[k][:, :n] for k in ("input_ids", "boundary", "dia", "punct")})
    assert torch.allclose(padded.char[:, :n], plain.char, atol=1e-4)


def test_bad_batches_raise() -> None:
    encode = _encoder()
    with pytest.raises(InvalidInputError):
        planes_to_tensors([])
    with pytest.raises(InvalidInputError):
        planes_to_tensors([encode(ILIAD_1)], pad_to=3)
    with pytest.raises(InvalidInputError):
        planes_to_tensors(["μῆνιν"])
    broken = _stand_in_encode(ILIAD_1)
    broken.boundary = broken.boundary[:-1]
    with pytest.raises(InvalidInputError, match="unequal"):
        planes_to_tensors([broken])
