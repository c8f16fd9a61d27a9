"""Types shared by the Thinc layers: what the char encoder hands to listeners and poolers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes
    from .gaps import GapRun

#: Head names of ``StoicheiaDocData.logits`` and their widths (output classes).
LOGIT_HEADS: dict[str, int] = {"char": 27, "boundary": 3, "dia": 48, "cap": 2, "punct": 6}


@dataclass
class StoicheiaDocData:
    """The encoder's view of one Doc (stored as ``doc._.stoicheia``); built only by
    :func:`stoicheia_spacy.encoder.gaps.encode_text` through the ``stoicheia_encoder`` pipe.

    ``planes`` are the codec planes of ``doc.text`` with every Leiden gap as MASK letters
    (one position per Greek letter or MASK letter); ``planes.offsets[i]`` is letter
    ``i``'s index in ``doc.text`` (-1 for a gap's MASK letters). ``gaps`` lists the gaps
    (:class:`~stoicheia_spacy.encoder.gaps.GapRun`: MASK letters ``planes[run.letters]``,
    markup span ``run.source_start:run.source_end`` in ``doc.text``); ``markup_error``
    is the parser's message when the markup did not parse and the text was read as
    plain text. ``inputs`` are the planes the backbone actually read (``planes`` with
    the planes the text does not mark set to UNKNOWN, see
    :func:`~stoicheia_spacy.encoder.gaps.hide_unmarked`). ``letter_token`` (n_letters,)
    is the token that holds each letter (a gap's letters: the token where its markup
    starts) and ``token_lengths`` (n_tokens,) how many letters each token holds (letters
    are in token order, so a token's letters are contiguous). ``hidden`` is the
    (depth + 1, n_letters, d_model) stack of the embedding sum and every block output;
    ``logits`` maps head names (:data:`LOGIT_HEADS`: char, boundary, dia, cap, punct)
    to raw (n_letters, C) float32 logits of the same forward (None when the pipe's
    ``store_logits`` is false). ``states`` holds, by key, what the components after the
    encoder read of the stack (:mod:`stoicheia_spacy.encoder.states`: a pooler's token
    vectors, the scanner's per-letter mix, the dater's layers); with the encoder's default
    ``states = "used"`` they replace ``hidden`` (None then) in a pipeline whose components
    declare what they read.
    """

    planes: CharPlanes
    letter_token: np.ndarray
    token_lengths: np.ndarray
    hidden: Any = None
    logits: dict[str, np.ndarray] | None = field(default=None)
    gaps: list[GapRun] = field(default_factory=list)
    inputs: CharPlanes | None = None
    markup_error: str | None = None
    states: dict[str, Any] = field(default_factory=dict)

    @property
    def gap_letters(self) -> np.ndarray:
        """Bool per letter: True for a gap's MASK letters."""
        mask = np.zeros(self.n_letters, dtype=bool)
        for run in self.gaps:
            mask[run.letters] = True
        return mask

    @property
    def n_letters(self) -> int:
        return int(self.letter_token.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.token_lengths.shape[0])

    def token_slice(self, i: int) -> slice:
        """Letter positions of token ``i`` (an empty slice for tokens without Greek letters)."""
        if not -self.n_tokens <= i < self.n_tokens:
            raise IndexError(f"token index {i} out of range for {self.n_tokens} tokens")
        i %= self.n_tokens
        start = int(self.token_lengths[:i].sum())
        return slice(start, start + int(self.token_lengths[i]))
