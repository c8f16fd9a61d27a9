"""Restoration scored as the paper's strict protocol (restorer ``scoring = "protocol"``).

The one place where the released restoration models' evaluation route lives. A gap of L
characters (spaces count) is restored as the authors' strict Ithaca-protocol evaluation
does it:

* **input planes**: the document's letters (other lacunae as MASK), word breaks known
  outside the gap (1 after a letter followed by whitespace, else 0; the last letter of the
  text 0; lacuna letters unknown unless whitespace follows), diacritics and punctuation
  unknown everywhere, region and century from ``doc._.region``/``doc._.century``
  (unknown by default, as in the evaluation);
* **letter counts**: for ``k`` = max(1, L − 3) … L letters the gap holds L − k spaces;
  ``k`` is skipped when the spaces cannot fit (one per slot between letters, plus one
  before the gap when the character before it is not whitespace, one after it likewise);
* **letter beam** (per ``k``): ``k`` MASK letters with unknown word breaks (and the letter
  before the gap's break freed when a leading space may fall there); each step expands
  every hypothesis by its 48 best (open slot, letter) pairs, scored by the log-softmax
  over the 24 letters only (no MASK, no BLANK), keeps the 20 best distinct partial
  fillings, and collects complete fillings with their summed log-probability;
* **word breaks**: the 8 best fillings of each ``k`` are run once more with their letters
  filled in; P(word end) at each break site is the boundary head's word-end +
  sentence-end probability, clamped to [1e-4, 1 − 1e-4]; the L − k spaces go to the most
  probable valid sites;
* **score** = (letter log-prob + log P of the chosen breaks + log(1 − P) of the others) /
  (k + number of valid sites): the length-normalised log-probability. Strings
  (σ only, spaces count) keep their best score; the top ``n_candidates`` are returned.

No other term enters (no BLANK mass, no added word-break log-probabilities beyond the
sites above, no width prior, no calibration). Our extension: a gap whose width is a range
tries every width and keeps each string's best score; an unknown width tries 1 …
``max_letters`` characters. ``probability`` is a softmax over the returned scores (only
here; the protocol ranks by score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..alphabet import ALPHABET, BND_UNKNOWN, DIA_UNKNOWN, MASK_ID, N_ALPHA, PUNCT_UNKNOWN
from ..errors import DecodingError
from .results import Restoration
from .select import _item
from .settings import RestorerSettings

if TYPE_CHECKING:
    from .settings import RestorerSettings

__all__ = ["PROTOCOL", "ProtocolGap", "protocol_candidates", "research_boundary"]

#: The strict protocol's constants (beam 20, 48 expansions per hypothesis, 8 fillings per
#: letter count re-scored for word breaks, 768-letter context, at most 3 spaces counted off).
PROTOCOL = {"beam": 20, "expand": 48, "refill": 8, "context": 768, "max_spaces": 3, "clamp": 1e-4}


@dataclass(frozen=True)
class ProtocolGap:
    """One gap: ``letters`` / ``boundary`` of the document without the gap (research
    conventions, :func:`research_boundary`), the gap's insertion point, its widths (None =
    unknown) and whether the characters around it are not whitespace (``lead_ok``/``trail_ok``)."""

    letters: np.ndarray
    boundary: np.ndarray
    insert_at: int
    widths: tuple[int, ...] | None
    lead_ok: bool
    trail_ok: bool
    region: int | None = None
    century: int | None = None


def research_boundary(boundary: np.ndarray, *, text_ends: bool = True) -> np.ndarray:
    """Our boundary plane in the protocol's convention: unknown stays unknown, a word or
    sentence end is a word end (1); with ``text_ends`` (the last letter ends the text, no
    gap after it) the last letter is 0, as nothing follows it."""
    b = np.asarray(boundary, dtype=np.int64)
    out = np.where(b == BND_UNKNOWN, BND_UNKNOWN, np.minimum(b, 1))
    if text_ends and len(out) and out[-1] != BND_UNKNOWN:
        out[-1] = 0
    return out


class _Model:
    """Batched forwards of the backbone in the protocol's planes."""

    def __init__(self, module: torch.nn.Module, region: int | None, century: int | None) -> None:
        self.module = module
        self.region, self.century = region, century
        self.forwards = 0
        try:
            self.device = next(module.parameters()).device
        except StopIteration:  # pragma: no cover - a parameterless stand-in
            self.device = torch.device("cpu")

    def __call__(self, ids: np.ndarray, bnd: np.ndarray) -> Any:
        self.forwards += 1
        B, T = ids.shape
        t_ids = torch.as_tensor(ids, dtype=torch.long, device=self.device)
        kwargs: dict[str, Any] = {"seg_id": torch.zeros(B, T, dtype=torch.long, device=self.device)}
        for key, value in (("region", self.region), ("century", self.century)):
            if value is not None:
                kwargs[key] = torch.full((B, T), int(value), dtype=torch.long, device=self.device)
        with torch.inference_mode():
            return self.module(t_ids, torch.as_tensor(np.broadcast_to(bnd, (B, T)).copy(), device=self.device),
                               torch.full((B, T), DIA_UNKNOWN, dtype=torch.long, device=self.device),
                               torch.full((B, T), PUNCT_UNKNOWN, dtype=torch.long, device=self.device), **kwargs)

    def letter_logp(self, ids: np.ndarray, bnd: np.ndarray) -> np.ndarray:
        out = self(ids, bnd)
        return torch.log_softmax(out.char[..., :N_ALPHA].float(), dim=-1).cpu().numpy()

    def break_logp(self, ids: np.ndarray, bnd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = self(ids, bnd)
        p = torch.softmax(out.boundary.float(), dim=-1)
        clamp = PROTOCOL["clamp"]
        p_end = p[..., 1:3].sum(-1).clamp(clamp, 1 - clamp)
        return p_end.log().cpu().numpy(), (1 - p_end).log().cpu().numpy()


def _letter_beam(model: _Model, window: np.ndarray, gap: list[int], bnd: np.ndarray,
                 beam: int) -> list[tuple[tuple[int, ...], float]]:
    """Complete fillings of the ``gap`` slots, best first (at most ``beam``), with summed log-probs."""
    expand = int(PROTOCOL["expand"])
    hyps: list[tuple[np.ndarray, tuple[int, ...], float]] = [(window.copy(), tuple(gap), 0.0)]
    finished: dict[tuple[int, ...], float] = {}
    while hyps:
        logp = model.letter_logp(np.stack([h[0] for h in hyps]), bnd)
        children: dict[tuple[bytes, tuple[int, ...]], tuple[np.ndarray, tuple[int, ...], float]] = {}
        for row, (seq, rem, score) in enumerate(hyps):
            sub = logp[row, list(rem)]  # (open slots, 24)
            flat = sub.reshape(-1)
            top = np.argsort(-flat, kind="stable")[:expand]
            for t in top.tolist():
                slot, letter = divmod(t, N_ALPHA)
                pos = rem[slot]
                new = seq.copy()
                new[pos] = letter
                left = tuple(p for p in rem if p != pos)
                value = score + float(sub[slot, letter])
                if not left:
                    key = tuple(int(x) for x in new[gap])
                    if key not in finished or finished[key] < value:
                        finished[key] = value
                else:
                    ckey = (new.tobytes(), left)
                    if ckey not in children or children[ckey][2] < value:
                        children[ckey] = (new, left, value)
        hyps = sorted(children.values(), key=lambda h: -h[2])[:beam]
    return sorted(finished.items(), key=lambda kv: -kv[1])[:beam]


def _one_width(model: _Model, gap: ProtocolGap, width: int, beam: int, hyps: dict[str, float]) -> None:
    """Add the protocol's candidates of one width ``width`` to ``hyps`` (string -> best score)."""
    n_pre = gap.insert_at
    ctx = int(PROTOCOL["context"])
    for k in range(max(1, width - int(PROTOCOL["max_spaces"])), width + 1):
        n_sp = width - k
        if n_sp > int(gap.lead_ok) + (k - 1) + int(gap.trail_ok):
            continue
        ids = np.concatenate([gap.letters[:n_pre], np.full(k, MASK_ID), gap.letters[n_pre:]]).astype(np.int64)
        bnd = np.concatenate([gap.boundary[:n_pre], np.full(k, BND_UNKNOWN), gap.boundary[n_pre:]]).astype(np.int64)
        if gap.lead_ok and n_pre > 0:
            bnd[n_pre - 1] = BND_UNKNOWN  # a leading space may fall before the gap
        gidx = list(range(n_pre, n_pre + k))
        lo, hi = max(0, gidx[0] - ctx // 2), min(len(ids), gidx[-1] + ctx // 2)
        window, bw = ids[lo:hi].copy(), bnd[lo:hi].copy()
        rel = [g - lo for g in gidx]
        found = _letter_beam(model, window, rel, bw, beam)[: int(PROTOCOL["refill"])]
        if not found:
            continue
        filled = []
        for letters, _ in found:
            w2 = window.copy()
            w2[rel] = letters
            filled.append(w2)
        has_lead = gap.lead_ok and rel[0] > 0
        sites = ([rel[0] - 1] if has_lead else []) + rel
        lp_end, lp_no = model.break_logp(np.stack(filled), bw)
        lp_end, lp_no = lp_end[:, sites], lp_no[:, sites]
        last = len(sites) - 1
        # valid break sites: the leading one, those between letters, the trailing one if trail_ok
        valid = [v for v in range(len(sites)) if (v == 0 and has_lead) or v != last or gap.trail_ok]
        for row, (letters, letter_score) in enumerate(found):
            pe, pn = lp_end[row], lp_no[row]
            order = sorted(valid, key=lambda v: -pe[v])
            chosen = set(order[:n_sp])
            if len(chosen) < n_sp:
                continue
            total = letter_score + sum(float(pe[v]) for v in chosen) + sum(float(pn[v]) for v in valid
                                                                          if v not in chosen)
            score = total / (k + len(valid))
            out: list[str] = []
            li = 0
            for v in range(len(sites)):
                if v == 0 and has_lead:
                    if v in chosen:
                        out.append(" ")
                    continue
                out.append(ALPHABET[int(letters[li])])
                li += 1
                if v in chosen:
                    out.append(" ")
            text = "".join(out)
            if len(text) != width or li != len(letters):
                continue
            if text not in hyps or hyps[text] < score:
                hyps[text] = score


def protocol_candidates(module: torch.nn.Module, gap: ProtocolGap, *, beam: int = RestorerSettings.beam_width,
                        n_best: int = RestorerSettings.n_candidates,
                        max_letters: int = 10) -> list[tuple[str, float]]:
    """The ranked ``(text, score)`` candidates of ``gap`` (best first, at most ``n_best``)."""
    if beam < 1 or n_best < 1:
        raise DecodingError("beam and n_best must be >= 1")
    widths = gap.widths if gap.widths is not None else tuple(range(1, max_letters + 1))
    if not widths or min(widths) < 1:
        raise DecodingError(f"gap widths must be >= 1, got {widths}")
    model = _Model(module, gap.region, gap.century)
    hyps: dict[str, float] = {}
    for width in widths:
        _one_width(model, gap, int(width), beam, hyps)
    return sorted(hyps.items(), key=lambda kv: -kv[1])[:n_best]


def _probabilities(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    z = np.asarray(scores, dtype=np.float64)
    p = np.exp(z - z.max())
    return (p / p.sum()).tolist()


def protocol_targets(module: Any, texts: Sequence[str], plans: Sequence[Any],
                     metadata: Sequence[tuple[int | None, int | None]], cfg: RestorerSettings | Mapping[str, Any],
                     *, from_spans: Sequence[bool]) -> list[list[Restoration]]:
    """The restorer's records (:class:`~.results.Restoration`) for each document's plan, every
    gap scored as the protocol: a candidate's ``score`` is the protocol's score."""
    out = []
    below = float(cfg.get("abstain_below", 0.0))
    above = float(cfg.get("confident_above", 0.0))
    for text, plan, (region, century), spans_mode in zip(texts, plans, metadata, from_spans, strict=True):
        items = []
        for target in plan.decode:
            q = target.query
            g = target.gap
            start, end = int(g.source_start), int(g.source_end)
            at_end = int(q.insert_at) >= len(q.context)
            gap = ProtocolGap(np.asarray(q.context.letters, np.int64),
                              research_boundary(q.context.boundary, text_ends=not at_end),
                              int(q.insert_at), q.widths,
                              lead_ok=start > 0 and not text[start - 1].isspace(),
                              trail_ok=end < len(text) and not text[end].isspace(),
                              region=region, century=century)
            ranked = protocol_candidates(module, gap, beam=int(cfg["beam_width"]), n_best=int(cfg["n_candidates"]),
                                         max_letters=int(cfg.get("max_letters", 10)))
            probs = _probabilities([s for _, s in ranked])
            cands = [_Cand(t, s, p) for (t, s), p in zip(ranked, probs, strict=True)]
            items.append(_item(target, spans_mode, "restored", cands, below, above))
        items += [_item(t, spans_mode, "too_wide", [], below, above) for t in plan.too_wide]
        out.append(sorted(items, key=lambda it: it.start))
    return out


@dataclass(frozen=True)
class _Cand:
    text: str
    logprob: float
    probability: float

    def as_tuple(self) -> tuple[str, float, float]:
        return (self.text, self.logprob, self.probability)
