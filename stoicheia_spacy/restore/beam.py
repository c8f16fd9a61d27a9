"""Non-sequential beam search for gap restoration, batched over hypotheses and gaps.

A :class:`GapQuery` is a gap in a letter context (``CharPlanes``). Each gap is
decoded through one or more :class:`~.widths.Template` layouts (``k`` MASK slots
for a width of L characters = k letters + L−k word breaks; for an unknown width one
free template per letter count k = 1..``max_letters``, or elastic slots). Every step
commits **one letter at any open slot**: each hypothesis is expanded over (open slot ×
letter) — or, with ``mode="confident"``, over the letters of its most confident open
slot. All hypotheses of one gap share ONE beam of ``beam`` rows whatever its number
of templates (each template keeps at least ``min_per_template`` rows, so no width dies
at the first step): at step s every live hypothesis has committed s letters, so their
summed log-probabilities compare directly; hypotheses whose template is full leave the
beam as finished candidates. Duplicates reached through different commit orders keep
their best score. All live hypotheses of all gaps go through ONE batched forward per
step, with the context cropped to ``context`` letters on each side of the gap. A gap
therefore costs at most ``max(k) + 1`` forwards and about ``beam × max(k)`` rows,
however many widths it has (the cost of an unknown width is that of its widest
letter count). One last forward over the best ``2 × max(beam, n_best)`` finished fillings of
each gap (by the width prior's key of their letter scores) reads the boundary head to
place word breaks: the L−k best break slots by log-odds for a fixed width, every slot
whose break probability exceeds 0.5 for a free or elastic template.

Speed: rows are scored grouped by length, so no padding is run (:class:`ModelScorer`).
Two options trade exactness for forwards (both off by default): ``unmask = u > 1`` commits
letters at the ``u`` most confident open slots of a hypothesis per forward (confidence-
ordered parallel unmasking, as in masked-diffusion sampling; children are the ``beam``
best joint fillings, scored by the sum of the slots' log-probabilities from the same
forward; elastic layouts still commit one), so a gap of ``k`` letters costs ``ceil(k/u)``
steps (a hypothesis with fewer than ``u`` open slots commits what is left, and competes in
its gap's beam with one letter fewer summed); ``final_forward=False`` reads the word breaks of a finished filling from the
forward that committed its last letter (that letter still masked) instead of one more
forward over all finished fillings.

Scores: ``logprob`` = Σ log P(committed letter) + Σ log P(break decision) over the
break slots. Candidates of a gap are ranked by ``score`` = :meth:`~.widths.WidthPrior.key`
(``logprob`` plus a dev-fitted length bonus and log prior of the candidate's width, or
its per-character mean; for one known width every rule ranks by ``logprob``).
``probability`` is a softmax over the gap's returned candidates of ``z / T``, with
``z`` = ``score`` (``rank="total"``) or ``score × mean width`` (``rank="mean"``) and
``T`` the temperature of the gap's width bucket (:func:`width_bucket`, fitted on dev
by :mod:`.calibration`): probabilities are normalised over the candidate set.

Elastic decoding follows the pretraining objective: M slots, targets = the letters
then BLANK; a letter may be committed only before every BLANK and a BLANK only after
every letter, slot 0 is never BLANK.

Candidate texts are bare lower-case letters (no diacritics) with spaces; σ is
written ς before a break or at the end of a word.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import torch

from ..alphabet import (
    ALPHABET,
    BLANK_ID,
    BND_UNKNOWN,
    CAP_LOWER,
    DIA_UNKNOWN,
    MASK_ID,
    N_ALPHA,
    PAD_ID,
    PUNCT_UNKNOWN,
)
from ..backbone import planes_to_tensors
from ..codec import CharPlanes
from ..errors import DecodingError
from .settings import RestorerSettings
from .widths import MAX_WIDTH, Template, WidthPrior, templates_for

__all__ = [
    "Candidate",
    "GapQuery",
    "ModelScorer",
    "Scorer",
    "beam_search",
    "bucket_temperature",
    "mask_slots",
    "width_bucket",
]

N_OUT = BLANK_ID + 1  # scorer columns: letters 0..23, MASK (unused), BLANK
NEG = float("-inf")
Mode = Literal["any", "confident"]


class Scorer(Protocol):
    """Maps padded batch tensors (``planes_to_tensors``) to log-probabilities:
    letters ``(B, T, 26)`` over ids 0..25 and word breaks ``(B, T, 2)`` (no break, break).
    ``forwards`` counts the batched steps."""

    forwards: int

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]: ...


class ModelScorer:
    """A :class:`Scorer` over a Stoicheia encoder (or any module with its forward signature).

    Rows are grouped by their real length (letters before the padding); rows of nearby
    lengths share one call padded to the longest (at most ``pad_ratio`` times their real
    positions; see :meth:`_groups`), in chunks of at most ``max_tokens`` positions: rows are
    independent (each is its own attention segment, padding another), so this changes no
    row's output beyond float rounding, and an unknown width's ten layouts are one call, not ten. One call still counts as one forward (one decoding
    step); ``tokens`` counts the positions run. Outputs at padding positions are 0.
    """

    def __init__(self, module: torch.nn.Module, *, max_tokens: int = 8192, pad_ratio: float = 1.5) -> None:
        self.module = module
        self.max_tokens = max_tokens
        self.pad_ratio = pad_ratio
        self.forwards = 0
        self.tokens = 0

    def _groups(self, lengths: torch.Tensor) -> list[tuple[int, torch.Tensor]]:
        """(length run, rows) groups: rows of nearby lengths share one call, padded to the
        longest (padding is its own attention segment, so no row's output changes), as long as
        the group runs at most ``pad_ratio`` times its real positions; ``pad_ratio = 1`` groups
        equal lengths only. Many small calls cost more than a little padding on CPU."""
        out = []
        left = lengths.clone()
        while bool((left > 0).any()):
            n = int(left.max())
            cand = torch.nonzero(left > 0).flatten()
            order = cand[torch.argsort(left[cand], descending=True, stable=True)]
            real = torch.cumsum(left[order], 0)
            size = torch.arange(1, len(order) + 1) * n
            take = int((size <= self.pad_ratio * real).nonzero().max()) + 1 if self.pad_ratio > 1 else 0
            take = max(take, int((left[order] == n).sum()))
            rows = order[:take].sort().values
            out.append((n, rows))
            left[rows] = 0
        return out

    def __call__(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        self.forwards += 1
        try:
            device = next(self.module.parameters()).device
        except StopIteration:
            device = torch.device("cpu")
        B, T = batch["input_ids"].shape
        lengths = (batch["input_ids"] != PAD_ID).sum(1)
        letters = torch.zeros(B, T, N_OUT)
        breaks = torch.zeros(B, T, 2)
        was_training = self.module.training
        self.module.eval()
        try:
            with torch.inference_mode():
                for n, rows in self._groups(lengths):
                    step = max(1, self.max_tokens // max(n, 1))
                    for s in range(0, len(rows), step):
                        part_rows = rows[s : s + step]
                        part = {k: batch[k][part_rows, :n].to(device) for k in _INPUTS + _METADATA if k in batch}
                        self.tokens += len(part_rows) * n
                        extra = {k: part[k] for k in _METADATA if k in part}  # region / century rows
                        out = self.module(part["input_ids"], part["boundary"], part["dia"], part["punct"],
                                          seg_id=part["seg_id"], **extra)
                        char = out.char[..., :N_OUT].float().clone()
                        char[..., MASK_ID] = NEG
                        letters[part_rows, :n] = torch.log_softmax(char, dim=-1).cpu()
                        bnd = torch.log_softmax(out.boundary.float(), dim=-1)
                        brk = torch.logaddexp(bnd[..., 1], bnd[..., 2])
                        breaks[part_rows, :n] = torch.stack([bnd[..., 0], brk], dim=-1).cpu()
                        if bool((lengths[part_rows] < n).any()):  # padding of the shorter rows: 0
                            pad = (torch.arange(n)[None, :] >= lengths[part_rows][:, None]).cpu()
                            letters[part_rows, :n] = letters[part_rows, :n].masked_fill(pad[..., None], 0.0)
                            breaks[part_rows, :n] = breaks[part_rows, :n].masked_fill(pad[..., None], 0.0)
        finally:
            self.module.train(was_training)
        return letters, breaks


_INPUTS = ("input_ids", "boundary", "dia", "punct", "seg_id")
#: Optional per-row metadata ids (restoration fine-tunes' ``e_region``/``e_century``).
_METADATA = ("region", "century")


@dataclass(frozen=True)
class GapQuery:
    """A gap inserted before letter ``insert_at`` of ``context``.

    ``widths``: candidate widths in characters (spaces count), or None = unknown.
    ``letters``: the gap holds exactly that many letters, word breaks free (the chat
    format's "[N letters missing]"); ``widths`` is then ignored. ``left_open``/``right_open``: the gap touches a letter on that side,
    so a word break may fall at that edge (the left neighbour's boundary is then an
    output, not an input). Other gaps of the document should already be MASK slots
    in ``context`` (see :func:`mask_slots`).
    """

    context: CharPlanes
    insert_at: int
    widths: tuple[int, ...] | None
    left_open: bool = False
    right_open: bool = False
    letters: int | None = None  # a gap counted in letters only ("[N letters missing]"): free breaks
    region: int | None = None  # e_region / e_century row ids of the document (None: the model's default)
    century: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.insert_at <= len(self.context):
            raise DecodingError(f"insert_at {self.insert_at} outside the context of {len(self.context)} letters")
        if self.widths is not None and (not self.widths or min(self.widths) < 1):
            raise DecodingError(f"gap widths must be >= 1, got {self.widths}")


@dataclass(frozen=True)
class Candidate:
    """One restoration of a gap."""

    text: str
    logprob: float
    probability: float
    score: float  # ranking key (WidthPrior.key of logprob and width)
    width: int  # characters, spaces included

    def as_tuple(self) -> tuple[str, float, float]:
        return (self.text, self.logprob, self.probability)


def mask_slots(n: int) -> CharPlanes:
    """``n`` unknown letter positions (letter MASK, every other input plane UNKNOWN)."""
    return CharPlanes(
        letters=np.full(n, MASK_ID, np.uint8),
        boundary=np.full(n, BND_UNKNOWN, np.uint8),
        diacritics=np.full(n, DIA_UNKNOWN, np.uint8),
        capitals=np.full(n, CAP_LOWER, np.uint8),
        punctuation=np.full(n, PUNCT_UNKNOWN, np.uint8),
        offsets=np.full(n, -1, np.int64),
    )


@dataclass
class _Layout:
    query: int
    template: Template
    start: int  # row index of the first slot
    left_open: bool
    right_open: bool
    planes: CharPlanes = field(repr=False)


def width_bucket(widths: tuple[int, ...] | None) -> str:
    """Calibration bucket of a gap's width spec: ``1-3``, ``4-6``, ``7-10``, ``11+``
    (one known width), ``range`` or ``unknown``."""
    if widths is None:
        return "unknown"
    if len(widths) > 1:
        return "range"
    w = widths[0]
    return "1-3" if w <= 3 else "4-6" if w <= 6 else "7-10" if w <= 10 else "11+"


def bucket_temperature(temperature: float | Mapping[str, float], bucket: str) -> float:
    """The temperature of ``bucket`` (a number applies to every bucket; a mapping falls
    back to its ``default`` entry, then 1)."""
    if isinstance(temperature, Mapping):
        return float(temperature.get(bucket, temperature.get("default", 1.0)))
    return float(temperature)


def _layouts(queries: Sequence[GapQuery], context: int, space_ratio: float, elastic_slots: int,
             unknown: str, max_letters: int, max_width: int) -> list[_Layout]:
    out = []
    for qi, q in enumerate(queries):
        lo = max(0, q.insert_at - context)
        hi = min(len(q.context), q.insert_at + context)
        left, right = q.context[lo : q.insert_at], q.context[q.insert_at : hi]
        if q.left_open and len(left):
            left = CharPlanes.concat([left])
            left.boundary[-1] = BND_UNKNOWN
        widths = None if q.widths is None else list(q.widths)
        tpls = [Template(q.letters, None)] if q.letters else templates_for(widths, q.left_open, q.right_open, space_ratio=space_ratio,
                                 elastic_slots=elastic_slots, unknown=unknown, max_letters=max_letters,
                                 max_width=max_width)
        for tpl in tpls:
            planes = CharPlanes.concat([left, mask_slots(tpl.slots), right])
            out.append(_Layout(qi, tpl, len(left), q.left_open and len(left) > 0, q.right_open, planes))
    return out


def _pad(batch: dict[str, torch.Tensor], rows: torch.Tensor) -> dict[str, torch.Tensor]:
    return {k: v[rows] for k, v in batch.items() if k != "lengths"}


def _group_rank(groups: torch.Tensor) -> torch.Tensor:
    """Rank of each row within its group, rows being in score order (stable)."""
    order = torch.argsort(groups, stable=True)
    counts = torch.bincount(groups)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.empty_like(groups)
    rank[order] = torch.arange(len(groups)) - starts[groups[order]]
    return rank


def beam_search(
    scorer: Scorer | Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, torch.Tensor]],
    queries: Sequence[GapQuery],
    *,
    beam: int = RestorerSettings.beam_width,
    n_best: int = RestorerSettings.n_candidates,
    context: int = 512,
    mode: Mode = "any",
    space_ratio: float = 0.25,
    elastic_slots: int = 12,
    temperature: float | Mapping[str, float] = 1.0,
    unknown: str = "enumerate",
    max_letters: int = 10,
    max_width: int = MAX_WIDTH,
    prior: WidthPrior | None = None,
    min_per_template: int = 1,
    unmask: int = 1,
    final_forward: bool = True,
    rescore: Callable[[GapQuery, list[str]], np.ndarray] | None = None,
) -> list[list[Candidate]]:
    """Ranked candidates (best first, at most ``n_best``, distinct texts) for every query.

    ``rescore(query, texts)``: log-scores added to every finished text of a query before ranking
    (e.g. :class:`~.ngram_lm.LMRescorer`, the n-gram LM's joint probability of the filled window).

    A query whose narrowest width exceeds ``max_width`` raises ``DecodingError`` (check
    with :func:`~.widths.too_wide` first to report it instead)."""
    if beam < 1 or n_best < 1 or min_per_template < 0 or unmask < 1:
        raise DecodingError("beam, n_best and unmask must be >= 1, min_per_template >= 0")
    if mode not in ("any", "confident"):
        raise DecodingError(f"mode must be 'any' or 'confident', got {mode!r}")
    temps = temperature.values() if isinstance(temperature, Mapping) else [temperature]
    if any(float(t) <= 0 for t in temps):
        raise DecodingError("temperature must be > 0")
    if not queries:
        return []
    prior = prior or WidthPrior()
    layouts = _layouts(queries, context, space_ratio, elastic_slots, unknown, max_letters, max_width)
    G = len(layouts)
    tmpl = planes_to_tensors([lay.planes for lay in layouts])
    S = max(lay.template.slots for lay in layouts)
    n_slots = torch.tensor([lay.template.slots for lay in layouts])
    start = torch.tensor([lay.start for lay in layouts])
    elastic = torch.tensor([lay.template.elastic for lay in layouts])
    t_query = torch.tensor([lay.query for lay in layouts])
    T = tmpl["input_ids"].shape[1]
    for meta_key in _METADATA:  # the documents' region / century ids, when every query has one
        meta_ids = [getattr(queries[lay.query], meta_key) for lay in layouts]
        if all(v is not None for v in meta_ids):
            tmpl[meta_key] = torch.tensor(meta_ids, dtype=torch.long)[:, None].expand(G, T).contiguous()
    slot_idx = torch.arange(S)
    valid = slot_idx[None, :] < n_slots[:, None]  # (G, S)
    slot_pos = (start[:, None] + slot_idx[None, :]).clamp(max=T - 1)  # (G, S)
    allowed = torch.zeros(G, N_OUT, dtype=torch.bool)
    allowed[:, :N_ALPHA] = True
    allowed[:, BLANK_ID] = elastic

    # live hypotheses: template id, fill (MASK = open), summed letter log-probability
    h_t = torch.arange(G)
    h_fill = torch.full((G, S), MASK_ID, dtype=torch.long)
    h_score = torch.zeros(G, dtype=torch.float64)
    done_t, done_fill, done_score, done_blp = [], [], [], []
    edge_pos = torch.cat([(start - 1).clamp(min=0)[:, None], slot_pos], dim=1)  # (G, S+1): left edge, after slot i

    def edge_breaks(break_lp: torch.Tensor, t_rows: torch.Tensor) -> torch.Tensor:
        return break_lp.gather(1, edge_pos[t_rows][:, :, None].expand(-1, -1, 2)).double()  # (R, S+1, 2)

    def inputs(t_rows: torch.Tensor, fills: torch.Tensor) -> dict[str, torch.Tensor]:
        batch = _pad(tmpl, t_rows)
        ids = batch["input_ids"].clone()
        pos = slot_pos[t_rows]
        fill = torch.where(valid[t_rows], fills, ids.gather(1, pos))
        ids.scatter_(1, pos, fill)
        batch["input_ids"] = ids
        return batch

    while len(h_t):
        letter_lp, step_break_lp = scorer(inputs(h_t, h_fill))
        t = h_t
        R = len(t)
        open_ = (h_fill == MASK_ID) & valid[t]
        lp = letter_lp.gather(1, slot_pos[t][:, :, None].expand(-1, -1, N_OUT)).double()  # (R, S, 26)
        lp = lp.masked_fill(~allowed[t][:, None, :], NEG)
        lp = lp - torch.logsumexp(lp, dim=-1, keepdim=True)
        ok = open_[:, :, None].expand(-1, -1, N_OUT).clone()
        is_letter = (h_fill < N_ALPHA) & valid[t]
        is_blank = h_fill == BLANK_ID
        first_blank = torch.where(is_blank, slot_idx[None, :], S).min(1).values
        last_letter = torch.where(is_letter, slot_idx[None, :], -1).max(1).values
        el = elastic[t]
        letter_ok = slot_idx[None, :] < first_blank[:, None]
        blank_ok = (slot_idx[None, :] > last_letter[:, None]) & (slot_idx[None, :] > 0)
        ok[:, :, :N_ALPHA] &= torch.where(el[:, None], letter_ok, True)[:, :, None]
        ok[:, :, BLANK_ID] &= blank_ok
        lp = lp.masked_fill(~ok, NEG)
        if mode == "confident":
            best_pos = lp.max(-1).values.argmax(1)
            keep = slot_idx[None, :] == best_pos[:, None]
            lp = lp.masked_fill(~keep[:, :, None], NEG)
        if unmask > 1:
            parent, all_fill, all_s = _expand_parallel(lp, h_fill, h_score, beam, unmask, el)
        else:
            cand = h_score[:, None, None] + lp
            k = min(beam, S * N_OUT)
            top_s, top_i = cand.reshape(R, -1).topk(k, dim=1)
            parent = torch.arange(R)[:, None].expand(-1, k).reshape(-1)
            top_s, top_i = top_s.reshape(-1), top_i.reshape(-1)
            finite = torch.isfinite(top_s)
            parent, top_s, top_i = parent[finite], top_s[finite], top_i[finite]
            pos, letter = top_i // N_OUT, top_i % N_OUT
            all_fill = h_fill[parent].clone()
            all_fill[torch.arange(len(parent)), pos] = letter
            all_s = top_s
        all_t = t[parent]
        # dedupe (template, fill), keeping the best score; rows end in score order
        order = torch.argsort(all_s, descending=True, stable=True)
        all_t, all_fill, all_s, parent = all_t[order], all_fill[order], all_s[order], parent[order]
        key = torch.cat([all_t[:, None], all_fill], dim=1)
        _, inverse = torch.unique(key, dim=0, return_inverse=True)
        first = torch.full((int(inverse.max()) + 1,), len(inverse), dtype=torch.long)
        first.scatter_reduce_(0, inverse, torch.arange(len(inverse)), reduce="amin")
        first = first.sort().values
        all_t, all_fill, all_s, parent = all_t[first], all_fill[first], all_s[first], parent[first]
        # one beam per gap (every hypothesis has committed as many letters), plus a floor per template
        keep_rows = (_group_rank(t_query[all_t]) < beam) | (_group_rank(all_t) < min_per_template)
        all_t, all_fill, all_s, parent = all_t[keep_rows], all_fill[keep_rows], all_s[keep_rows], parent[keep_rows]
        full = ~((all_fill == MASK_ID) & valid[all_t]).any(1)
        done_t.append(all_t[full])
        done_fill.append(all_fill[full])
        done_score.append(all_s[full])
        if not final_forward:  # word breaks as read with the last letter still masked
            done_blp.append(edge_breaks(step_break_lp, t)[parent[full]])
        h_t, h_fill, h_score = all_t[~full], all_fill[~full], all_s[~full]

    f_t, f_fill, f_score = torch.cat(done_t), torch.cat(done_fill), torch.cat(done_score)
    if final_forward:  # boundary head over the best finished fillings of each gap
        widths = torch.tensor([lay.template.width or lay.template.slots for lay in layouts])
        f_t, f_fill, f_score = _final_rows(f_t, f_fill, f_score, t_query, widths, 2 * max(beam, n_best), prior)
        blp = edge_breaks(scorer(inputs(f_t, f_fill))[1], f_t)
    else:
        blp = torch.cat(done_blp)
    return _finish(queries, layouts, f_t, f_fill, f_score, blp, n_best, temperature, prior, rescore)


def _final_rows(f_t: torch.Tensor, f_fill: torch.Tensor, f_score: torch.Tensor, t_query: torch.Tensor,
                widths: torch.Tensor, keep: int, prior: WidthPrior) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The ``keep`` best finished fillings of each gap by the prior's key of their letters'
    score and their layout's width (a free layout's: its letter count): only these get the
    last forward, which reads their word breaks. An unknown width finishes up to ``beam``
    fillings per letter count; the breaks add far less to a score than the letters that
    ranked them."""
    key = torch.tensor([prior.key(float(s), int(w)) for s, w in zip(f_score.tolist(), widths[f_t].tolist(), strict=True)],
                       dtype=torch.float64)
    order = torch.argsort(key, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank[order] = _group_rank(t_query[f_t][order])
    chosen = torch.nonzero(rank < keep).flatten()
    return f_t[chosen], f_fill[chosen], f_score[chosen]


def _expand_parallel(lp: torch.Tensor, fill: torch.Tensor, score: torch.Tensor, beam: int, unmask: int,
                     elastic: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Children committing a letter at each of the ``unmask`` most confident open slots of
    every row (one for elastic rows), scored by the sum of the slots' log-probabilities
    from the same forward: the best ``beam`` joint fillings per row. ``lp`` ``(R, S, 26)``
    holds -inf where a letter may not go. Returns (parent row, filling, score)."""
    R, S, V = lp.shape
    conf = lp.max(-1).values  # (R, S); -inf on closed slots
    u = min(unmask, S)
    slot_conf, slots = conf.topk(u, dim=1)  # (R, u), most confident first
    use = torch.isfinite(slot_conf)
    use[:, 1:] &= ~elastic[:, None]
    acc_s = score[:, None]  # (R, K)
    acc_letters = torch.empty(R, 1, 0, dtype=torch.long)  # (R, K, j)
    rows = torch.arange(R)
    for j in range(u):
        lpj = lp[rows, slots[:, j]]  # (R, V)
        skip = torch.full_like(lpj, NEG)
        skip[:, 0] = 0.0  # a row without a j-th slot keeps its children unchanged (letter ignored)
        lpj = torch.where(use[:, j : j + 1], lpj, skip)
        comb = (acc_s[:, :, None] + lpj[:, None, :]).reshape(R, -1)  # (R, K*V)
        k = min(beam, comb.shape[1])
        acc_s, idx = comb.topk(k, dim=1)
        prev, letter = idx // V, idx % V
        acc_letters = torch.cat([acc_letters.gather(1, prev[:, :, None].expand(-1, -1, j)), letter[:, :, None]], dim=2)
    K = acc_s.shape[1]
    parent = rows[:, None].expand(-1, K).reshape(-1)
    out_s = acc_s.reshape(-1)
    finite = torch.isfinite(out_s)
    out_fill = fill[parent].clone()
    flat = torch.arange(R * K)
    for j in range(u):
        do = use[parent, j]
        out_fill[flat[do], slots[parent, j][do]] = acc_letters.reshape(R * K, u)[:, j][do]
    return parent[finite], out_fill[finite], out_s[finite]


def _finish(
    queries: Sequence[GapQuery],
    layouts: list[_Layout],
    h_t: torch.Tensor,
    h_fill: torch.Tensor,
    h_score: torch.Tensor,
    blp: torch.Tensor,
    n_best: int,
    temperature: float | Mapping[str, float],
    prior: WidthPrior,
    rescore: Callable[[GapQuery, list[str]], np.ndarray] | None = None,
) -> list[list[Candidate]]:
    """Place word breaks, render texts, dedupe, rescore (``rescore``) and rank per query."""
    best: list[dict[str, tuple[float, float, int]]] = [{} for _ in queries]
    fills = h_fill.numpy()
    scores = h_score.numpy()
    blp_np = blp.numpy()
    for r in range(len(h_t)):
        lay = layouts[int(h_t[r])]
        tpl = lay.template
        fill = fills[r, : tpl.slots]
        letters = fill[fill < N_ALPHA]
        n = len(letters)
        if n == 0:
            continue
        # decision slots: 0 = before the first letter, i = after letter i-1 (i = 1..n)
        slot_ok = np.zeros(n + 1, dtype=bool)
        slot_ok[0] = lay.left_open
        slot_ok[1:n] = True
        slot_ok[n] = lay.right_open
        no, yes = blp_np[r, : n + 1, 0], blp_np[r, : n + 1, 1]
        odds = np.where(slot_ok, yes - no, NEG)
        base = float(scores[r] + no[slot_ok].sum())
        if tpl.free:
            chosen = slot_ok & (odds > 0)
        else:
            chosen = np.zeros(n + 1, dtype=bool)
            if tpl.spaces:
                chosen[np.argsort(-odds, kind="stable")[: tpl.spaces]] = True
            if not slot_ok[chosen].all():
                continue
        total = base + float(odds[chosen].sum())
        text = _render(letters, chosen, ends_word=not lay.right_open)
        width = len(text)
        key = prior.key(total, width)
        prev = best[lay.query].get(text)
        if prev is None or key > prev[1]:
            best[lay.query][text] = (total, key, width)
    if rescore is not None:
        for query, table in zip(queries, best, strict=True):
            texts = list(table)
            extras = np.asarray(rescore(query, texts), dtype=np.float64)
            if len(extras):  # relative to the query's best (ranks and probabilities do not change)
                extras = extras - extras.max()
            for text, extra in zip(texts, extras, strict=True):
                total, _, width = table[text]
                table[text] = (total + float(extra), prior.key(total + float(extra), width), width)
    out: list[list[Candidate]] = []
    for query, table in zip(queries, best, strict=True):
        ranked = sorted(table.items(), key=lambda item: -item[1][1])[:n_best]
        if not ranked:
            out.append([])
            continue
        keys = np.array([v[1] for _, v in ranked])
        scale = 1.0 if prior.rank == "total" else float(np.mean([v[2] for _, v in ranked]))
        bucket = width_bucket((query.letters,) if query.letters else query.widths)
        z = keys * scale / bucket_temperature(temperature, bucket)
        probs = np.exp(z - z.max())
        probs /= probs.sum()
        out.append([
            Candidate(text, float(v[0]), float(p), float(v[1]), int(v[2]))
            for (text, v), p in zip(ranked, probs, strict=True)
        ])
    return out


def _render(letters: np.ndarray, breaks: np.ndarray, *, ends_word: bool) -> str:
    """Bare letters with a space at each chosen break slot; final sigma before a break."""
    chars = [ALPHABET[int(i)] for i in letters]
    n = len(chars)
    parts = [" "] if breaks[0] else []
    for i, ch in enumerate(chars):
        word_end = breaks[i + 1] or (i == n - 1 and ends_word)
        parts.append("ς" if ch == "σ" and word_end else ch)
        if breaks[i + 1]:
            parts.append(" ")
    return "".join(parts)


def counting(scorer: Any) -> int:
    """Forwards made so far by a scorer (0 when it does not count)."""
    return int(getattr(scorer, "forwards", 0))
