"""Interpolated Kneser-Ney character n-gram language model over letter ids.

The symbol alphabet is the 24 letter ids, plus ``SPACE`` (a word boundary, which the
backbone also sees as input) and ``UNK`` (an unknown symbol: a masked letter or a
lacuna, which truncates the history). Counting and scoring are vectorised with numpy:
n-grams are hashed to int64 keys (base ``N_SYMBOLS``) and looked up with
``np.searchsorted``; there is no Python loop over characters.

``masked_logprobs`` scores a letter hidden in the middle of a text the way a masked
model is scored: every candidate letter is substituted and the log-probability of the
whole window of n-grams that contains it is compared (a proper bidirectional
conditional under the left-to-right model), renormalised over the 24 letters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..alphabet import N_ALPHA

SPACE = N_ALPHA  # word boundary symbol
UNK = N_ALPHA + 1  # unknown / masked symbol; never predicted, truncates histories
N_SYMBOLS = N_ALPHA + 2
_BASE = np.int64(N_SYMBOLS + 1)  # +1 so that shorter n-grams never collide with longer ones


def _hash(windows: np.ndarray) -> np.ndarray:
    """Hash rows of symbol ids (k columns) to int64 keys; symbols are shifted by one."""
    keys = np.zeros(windows.shape[0], dtype=np.int64)
    for col in range(windows.shape[1]):  # loop over n-gram order, not characters
        keys = keys * _BASE + (windows[:, col].astype(np.int64) + 1)
    return keys


def _windows(seq: np.ndarray, k: int) -> np.ndarray:
    if len(seq) < k:
        return np.zeros((0, k), dtype=seq.dtype)
    return np.lib.stride_tricks.sliding_window_view(seq, k)


@dataclass
class _Table:
    keys: np.ndarray
    values: np.ndarray

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        if len(self.keys) == 0:
            return np.zeros(len(keys), dtype=np.float64)
        idx = np.searchsorted(self.keys, keys)
        idx = np.minimum(idx, len(self.keys) - 1)
        found = self.keys[idx] == keys
        return np.where(found, self.values[idx], 0.0)


def _count(keys: np.ndarray) -> _Table:
    uniq, counts = np.unique(keys, return_counts=True)
    return _Table(uniq, counts.astype(np.float64))


@dataclass
class CharNgramLM:
    """Interpolated Kneser-Ney LM of order ``order`` over letter/space symbols."""

    order: int = 6
    discount: float = 0.75
    # per order k (1..order): tables of n-gram scores and of history statistics
    _ngram: list[_Table] = field(default_factory=list, repr=False)
    _hist_total: list[_Table] = field(default_factory=list, repr=False)
    _hist_types: list[_Table] = field(default_factory=list, repr=False)

    def fit(self, sequences: Iterable[np.ndarray]) -> CharNgramLM:
        """Count n-grams over symbol sequences (letter ids, ``SPACE``, ``UNK``)."""
        if self.order < 1:
            raise ValueError("order must be >= 1")
        grams: list[list[np.ndarray]] = [[] for _ in range(self.order + 1)]
        for seq in sequences:
            seq = np.asarray(seq, dtype=np.int64)
            for k in range(1, self.order + 1):
                win = _windows(seq, k)
                win = win[~(win == UNK).any(axis=1)]
                grams[k].append(_hash(win))
        keys = [np.concatenate(g) if g else np.zeros(0, np.int64) for g in grams]
        self._ngram, self._hist_total, self._hist_types = [], [], []
        for k in range(1, self.order + 1):
            if k == self.order:
                table = _count(keys[k])  # raw counts at the top order
            else:
                # continuation counts: number of distinct left extensions of each k-gram
                longer = np.unique(keys[k + 1])
                table = _count(longer % (_BASE**k))
            self._ngram.append(table)
            hist = table.keys // _BASE  # the history (first k-1 symbols) of each n-gram
            order_idx = np.argsort(hist, kind="stable")
            h_sorted, v_sorted = hist[order_idx], table.values[order_idx]
            uniq, start = np.unique(h_sorted, return_index=True)
            self._hist_total.append(_Table(uniq, np.add.reduceat(v_sorted, start) if len(v_sorted) else v_sorted))
            self._hist_types.append(_Table(uniq, np.diff(np.append(start, len(h_sorted))).astype(np.float64)))
        return self

    def logprob(self, histories: np.ndarray, symbols: np.ndarray, hist_len: np.ndarray | None = None) -> np.ndarray:
        """Natural-log P(symbol | history) for rows of ``histories`` (order-1 columns).

        ``hist_len`` (optional) limits how many trailing history symbols are used per row
        (the rest is treated as unseen context, e.g. across an unknown symbol).
        """
        if not self._ngram:
            raise RuntimeError("fit the model first")
        n = len(symbols)
        ctx = self.order - 1
        histories = np.asarray(histories, dtype=np.int64).reshape(n, ctx)
        symbols = np.asarray(symbols, dtype=np.int64)
        if hist_len is None:
            hist_len = np.full(n, ctx, dtype=np.int64)
        prob = np.full(n, 1.0 / (N_SYMBOLS - 1), dtype=np.float64)  # uniform over real symbols
        for k in range(1, self.order + 1):
            hist_cols = histories[:, ctx - (k - 1) :] if k > 1 else histories[:, :0]
            gram_keys = _hash(np.concatenate([hist_cols, symbols[:, None]], axis=1))
            hist_keys = _hash(hist_cols) if k > 1 else np.zeros(n, dtype=np.int64)
            count = self._ngram[k - 1].lookup(gram_keys)
            total = self._hist_total[k - 1].lookup(hist_keys)
            types = self._hist_types[k - 1].lookup(hist_keys)
            seen = total > 0
            safe_total = np.where(seen, total, 1.0)
            interp = np.maximum(count - self.discount, 0.0) / safe_total + self.discount * types / safe_total * prob
            usable = seen & (hist_len >= k - 1)
            prob = np.where(usable, interp, prob)
        return np.log(prob)

    def masked_logprobs(self, seq: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Log-probabilities (len(positions) × 24) of each letter at masked ``positions``.

        ``seq`` holds symbols with the masked letters set to ``UNK``; each candidate is
        substituted in turn and scored by the n-grams whose windows contain it.
        """
        seq = np.asarray(seq, dtype=np.int64)
        positions = np.asarray(positions, dtype=np.int64)
        ctx = self.order - 1
        padded = np.concatenate([np.full(ctx, SPACE, np.int64), seq, np.full(ctx, SPACE, np.int64)])
        n_pos = len(positions)
        cand = np.arange(N_ALPHA, dtype=np.int64)
        # windows of 2*ctx+1 symbols centred on each masked position, one row per candidate
        win = np.lib.stride_tricks.sliding_window_view(padded, 2 * ctx + 1)[positions]
        win = np.repeat(win[:, None, :], N_ALPHA, axis=1).copy()
        win[:, :, ctx] = cand[None, :]
        win = win.reshape(n_pos * N_ALPHA, 2 * ctx + 1)
        total = np.zeros(len(win), dtype=np.float64)
        for j in range(ctx, 2 * ctx + 1):  # predicted symbol at offset j within the window
            sym = win[:, j]
            hist = win[:, j - ctx : j]
            is_unk = hist == UNK
            # usable history = symbols after the last UNK
            last_unk = np.where(is_unk.any(axis=1), ctx - 1 - np.argmax(is_unk[:, ::-1], axis=1), -1)
            hist_len = ctx - 1 - last_unk
            lp = self.logprob(np.where(is_unk, SPACE, hist), np.where(sym == UNK, SPACE, sym), hist_len)
            total += np.where(sym == UNK, 0.0, lp)
        scores = total.reshape(n_pos, N_ALPHA)
        scores -= scores.max(axis=1, keepdims=True)
        return scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
