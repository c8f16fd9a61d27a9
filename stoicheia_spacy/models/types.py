"""Types shared by the Thinc layers: what the char encoder hands to listeners and poolers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..codec import CharPlanes


@dataclass
class StoicheiaDocData:
    """The encoder's view of one Doc (stored as ``doc._.stoicheia``).

    ``planes`` are the codec planes of ``doc.text`` (one position per Greek letter);
    ``letter_token`` (n_letters,) is the index of the token that holds each letter and
    ``token_lengths`` (n_tokens,) how many letters each token holds (letters are in
    token order, so a token's letters are contiguous). ``hidden`` is the
    (depth + 1, n_letters, d_model) stack of the embedding sum and every block output;
    ``logits`` maps head names (char, boundary, dia, cap, punct) to (n_letters, C)
    arrays when the pipe was asked to keep them.
    """

    planes: CharPlanes
    letter_token: np.ndarray
    token_lengths: np.ndarray
    hidden: Any = None
    logits: dict[str, np.ndarray] | None = field(default=None)

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
