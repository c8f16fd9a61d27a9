"""The published corruption (``pretrain.corruption``) for a batch of windows, in torch ops.

``corrupt_batch`` draws, for every row of a padded ``[S, W]`` batch of windows, exactly
the law of ``CorruptionSampler`` (rate, pattern, exact masked counts, span layout, word
choice, elastic growth, partial-word anchors, channel availability), with no Python loop
over sequences: it runs on whatever device the planes are on (the GPU data path of
``pretrain.planes``). Only the random numbers differ from the numpy sampler, so the two
agree in distribution, not draw by draw (tested statistically).

Exact-count subsets ("k positions uniformly without replacement") are the ``k`` smallest
of i.i.d. uniform keys; ranges are laid down with difference arrays; the elastic growth is
a scatter of source positions into the output followed by a running maximum.
"""

from __future__ import annotations

import math

import torch

from stoicheia_spacy import alphabet as A
from stoicheia_spacy.errors import ConfigError

from .corruption import IGNORE_INDEX, PATTERNS, NoiseConfig

#: Output fields, as packed rows name them (``pretrain.sampling``).
FIELDS: tuple[str, ...] = (
    "input_ids", "boundary", "dia", "punct",
    "char_target", "char_weight", "bnd_target", "dia_target", "punct_target", "cap_target",
)
_SPAN, _WHOLE, _ELASTIC, _IID, _PARTIAL, _SUBST = range(len(PATTERNS))


def _rand(shape: tuple[int, ...], gen: torch.Generator, device: torch.device) -> torch.Tensor:
    return torch.rand(shape, generator=gen, device=device, dtype=torch.float32)


def _beta_integer(a: float, b: float, n: int, gen: torch.Generator, device: torch.device) -> torch.Tensor:
    """``n`` draws of Beta(a, b) for integer a, b: Gamma(a) / (Gamma(a) + Gamma(b)),
    each Gamma a sum of exponentials (exact, and driven by ``gen``)."""
    if a != int(a) or b != int(b):
        raise ConfigError(f"the batched sampler needs integer Beta parameters, got {a}, {b}")
    u = _rand((n, int(a) + int(b)), gen, device).double().clamp_min(1e-300)
    e = -torch.log(u)
    x = e[:, : int(a)].sum(1)
    return (x / (x + e[:, int(a):].sum(1))).float()


def _ranks(keys: torch.Tensor) -> torch.Tensor:
    """Rank of each key within its row (0 = smallest)."""
    order = torch.argsort(keys, dim=1)
    ranks = torch.empty_like(order)
    ranks.scatter_(1, order, torch.arange(keys.shape[1], device=keys.device).expand_as(order))
    return ranks


def _closest_prefix(sizes: torch.Tensor, n_cand: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Per row, the number of leading items (>= 1) whose cumulated size is closest to k."""
    cum = sizes.cumsum(1)
    dist = (cum - k[:, None]).abs().double()
    idx = torch.arange(sizes.shape[1], device=sizes.device)
    dist = torch.where(idx[None] < n_cand[:, None], dist, math.inf)
    return dist.argmin(1) + 1  # argmin takes the first minimum, as numpy does


def corrupt_batch(
    planes: dict[str, torch.Tensor],
    lengths: torch.Tensor,
    gen: torch.Generator,
    cfg: NoiseConfig | None = None,
    *,
    out_len: int | None = None,
) -> tuple[dict[str, torch.Tensor], torch.Tensor, dict[str, torch.Tensor]]:
    """Corrupt ``S`` windows at once.

    ``planes`` holds ``letters``, ``boundary``, ``diacritics``, ``capitals``,
    ``punctuation`` as ``[S, W]`` integer tensors (positions ``>= lengths`` are ignored).
    Returns ``(fields, out_lengths, draws)``: ``fields`` maps each name of ``FIELDS`` to
    ``[S, out_len]`` (int64; ``char_weight`` float32; positions past a row's output length
    hold padding values), ``out_lengths`` the corrupted lengths (elastic gaps make them
    grow; longer outputs are cut at ``out_len``, default ``2 W``), and ``draws`` the
    per-row rate ``t``, ``pattern`` (index into ``PATTERNS``, after the iid fallback) and
    channel ``modes`` ``[S, 3]`` (index into ``AVAILABILITY_MODES``).
    """
    cfg = cfg or NoiseConfig()
    letters = planes["letters"].long()
    S, W = letters.shape
    dev = letters.device
    out_len = out_len or 2 * W
    pos = torch.arange(W, device=dev)
    valid = pos[None] < lengths[:, None]
    lacuna = valid & (letters >= A.N_ALPHA)
    eligible = valid & ~lacuna
    n_el = eligible.sum(1)

    t = _beta_integer(cfg.rate_alpha, cfg.rate_beta, S, gen, dev).clamp(cfg.rate_min, cfg.rate_max)
    pcdf = torch.tensor(cfg.pattern_weights, device=dev, dtype=torch.float64).cumsum(0)
    u = _rand((S,), gen, dev).double()
    pattern = torch.searchsorted(pcdf, (u * pcdf[-1])[:, None], right=True)[:, 0].clamp(max=len(PATTERNS) - 1)
    k = torch.where(n_el > 0, torch.round(t.double() * n_el).long().clamp_min(1), 0)

    # ---- words: ends on word/sentence ends and the last letter
    bnd = planes["boundary"].long()
    ends = valid & ((bnd == A.BND_WORD_END) | (bnd == A.BND_SENT_END) | (pos[None] == lengths[:, None] - 1))
    word_id = torch.where(valid, ends.long().cumsum(1) - ends.long(), W)
    n_words = ends.sum(1)
    w_len = torch.zeros(S, W + 1, dtype=torch.long, device=dev).scatter_add_(1, word_id, valid.long())[:, :W]
    w_lac = torch.zeros(S, W + 1, dtype=torch.long, device=dev).scatter_add_(1, word_id, lacuna.long())[:, :W]
    w_start = w_len.cumsum(1) - w_len
    is_word = pos[None] < n_words[:, None]
    short = is_word & (w_len <= cfg.max_word_letters)
    min_len = 2 if cfg.anchor_end + cfg.anchor_beginning > 0 else 3
    cand = torch.where(
        (pattern == _WHOLE)[:, None], short & (w_lac < w_len),
        torch.where((pattern == _ELASTIC)[:, None], short & (w_lac == 0),
                    short & (w_lac == 0) & (w_len >= min_len)),
    )
    n_cand = cand.sum(1)
    word_pattern = (pattern == _WHOLE) | (pattern == _ELASTIC) | (pattern == _PARTIAL)
    pattern = torch.where(word_pattern & (n_cand == 0) & (k > 0), _IID, pattern)
    word_pattern = word_pattern & (pattern != _IID)

    # candidate words in a random order (non-candidates last)
    wkeys = torch.where(cand, _rand((S, W), gen, dev), 2.0)
    order = torch.argsort(wkeys, dim=1)
    o_len = w_len.gather(1, order)
    o_lac = w_lac.gather(1, order)
    o_cand = cand.gather(1, order)
    rank_idx = pos[None].expand(S, W)

    # whole word / elastic: the prefix of the order closest to k
    size = torch.where(o_cand, torch.where((pattern == _WHOLE)[:, None], o_len - o_lac, o_len), 0)
    j = _closest_prefix(size, n_cand, k)
    chosen_o = o_cand & (rank_idx < j[:, None]) & ((pattern == _WHOLE) | (pattern == _ELASTIC))[:, None]
    chosen = torch.zeros_like(cand).scatter_(1, order, chosen_o)
    masked = chosen.gather(1, word_id.clamp(max=W - 1)) & eligible
    elastic = chosen & (pattern == _ELASTIC)[:, None]
    extra = cfg.elastic_min_extra + (
        _rand((S, W), gen, dev) * (torch.floor(cfg.elastic_extra_frac * w_len.float()) + 1)
    ).long()
    extra = torch.where(elastic, extra, 0)

    # partial word: anchors, masked lengths, cut or spread to reach exactly k
    ucdf = torch.tensor(cfg.anchor_weights, device=dev, dtype=torch.float64).cumsum(0)
    ua = _rand((S, W), gen, dev).double()
    anchor3 = torch.searchsorted(ucdf, (ua * ucdf[-1]).contiguous(), right=True)
    cut2 = cfg.anchor_end / (cfg.anchor_end + cfg.anchor_beginning)
    anchor2 = (ua >= cut2).long()
    anchor = torch.where(o_len >= 3, anchor3, anchor2).clamp(max=2)
    cap = torch.where(o_cand, o_len - 1 - (anchor == 2).long(), 0)
    m = torch.where(o_cand, 1 + (_rand((S, W), gen, dev) * cap.float()).long().clamp(max=cap - 1), 0)
    cum = m.cumsum(1)
    total = cum[:, -1]
    enough = total >= k
    jp = torch.searchsorted(cum, k[:, None]).squeeze(1) + 1  # words taken when enough
    keep = torch.where(enough[:, None], rank_idx < jp[:, None], o_cand)
    cut = torch.where(enough, cum.gather(1, (jp - 1).clamp(0, W - 1)[:, None]).squeeze(1) - k, 0)
    m = torch.where(keep, m, 0)
    m = m - torch.where(rank_idx == (jp - 1)[:, None], cut[:, None], 0) * enough[:, None]
    # not enough: `deficit` spare units drawn uniformly without replacement
    spare = torch.where(keep & ~enough[:, None], cap - m, 0)
    cumspare = spare.cumsum(1)
    deficit = torch.where(enough, 0, torch.minimum(k - total, cumspare[:, -1]))
    unit_keys = torch.where(rank_idx < cumspare[:, -1:], _rand((S, W), gen, dev), 2.0)
    picked = _ranks(unit_keys) < deficit[:, None]
    owner = torch.searchsorted(cumspare, rank_idx.contiguous(), right=True).clamp(max=W - 1)
    m = m + torch.zeros_like(m).scatter_add_(1, owner, picked.long())
    room = (o_len - 1 - m).clamp_min(1)
    offset = torch.where(
        anchor == 0, o_len - m,
        torch.where(anchor == 1, 0, 1 + (_rand((S, W), gen, dev) * room.float()).long().clamp(max=room - 1)),
    )
    is_partial = (pattern == _PARTIAL)[:, None]
    o_start = w_start.gather(1, order)
    masked |= _row_ranges(o_start + offset, torch.where(is_partial, m, 0), W)

    # iid / substitution: the k smallest keys among eligible letters
    ranks = _ranks(torch.where(eligible, _rand((S, W), gen, dev), 2.0))
    is_iid = (pattern == _IID)[:, None]
    is_subst = (pattern == _SUBST)[:, None]
    masked |= is_iid & (ranks < k[:, None]) & eligible
    substituted = is_subst & (ranks < k[:, None]) & eligible
    n_keep = torch.minimum(torch.round(cfg.substitution_keep_ratio * k.double()).long(), n_el - k)
    kept_sup = is_subst & (ranks >= k[:, None]) & (ranks < (k + n_keep.clamp_min(0))[:, None]) & eligible

    # span: truncated geometric lengths summing to k, laid out over the eligible letters
    masked |= _span(eligible, n_el, k, pattern == _SPAN, cfg, gen)

    # ---- inputs and targets
    shift = torch.randint(1, A.N_ALPHA, (S, W), generator=gen, device=dev)
    inputs = torch.where(lacuna, A.MASK_ID, letters)
    inputs = torch.where(substituted, (letters + shift) % A.N_ALPHA, inputs)
    inputs = torch.where(masked, A.MASK_ID, inputs)
    supervised = masked | substituted | kept_sup
    out: dict[str, torch.Tensor] = {"input_ids": inputs}
    modes = []
    for channel, source, name, target, unknown in (
        ("boundary", bnd, "boundary", "bnd_target", A.BND_UNKNOWN),
        ("diacritics", planes["diacritics"].long(), "dia", "dia_target", A.DIA_UNKNOWN),
        ("punctuation", planes["punctuation"].long(), "punct", "punct_target", A.PUNCT_UNKNOWN),
    ):
        p_full, p_none = cfg.availability(channel)
        uc = _rand((S,), gen, dev)
        mode = torch.where(uc < p_full, 0, torch.where(uc < p_full + p_none, 1, 2))
        r = _rand((S,), gen, dev)
        patchy = _rand((S, W), gen, dev) < r[:, None]
        hidden = torch.where((mode == 0)[:, None], False, torch.where((mode == 1)[:, None], True, patchy))
        gone = hidden | masked
        out[name] = torch.where(gone, unknown, source)
        out[target] = torch.where(gone & ~lacuna & (source != unknown), source, IGNORE_INDEX)
        modes.append(mode)
    caps = planes["capitals"].long()
    out["cap_target"] = torch.where(masked & ~lacuna & (caps != A.CAP_UNKNOWN), caps, IGNORE_INDEX)
    out["char_target"] = torch.where(supervised & valid, letters, IGNORE_INDEX)

    # ---- elastic growth: the last letter of a chosen word is followed by `extra` BLANK slots
    ends_of_chosen = torch.zeros(S, W, dtype=torch.long, device=dev)
    last = (w_start + w_len - 1).clamp(0, W - 1)
    ends_of_chosen.scatter_add_(1, last, extra)
    repeats = torch.where(valid, 1 + ends_of_chosen, 0)
    start_out = repeats.cumsum(1) - repeats
    lengths_out = repeats.sum(1).clamp(max=out_len)
    marker = torch.full((S, out_len + 1), -1, dtype=torch.long, device=dev)
    marker.scatter_(1, torch.where(valid, start_out, out_len).clamp(max=out_len), pos[None].expand(S, W))
    marker = marker[:, :out_len]
    src = torch.cummax(marker, dim=1).values.clamp_min(0)
    opos = torch.arange(out_len, device=dev)
    inside = opos[None] < lengths_out[:, None]
    blank = inside & (marker < 0)
    weight = (1.0 / t)[:, None]
    fields: dict[str, torch.Tensor] = {}
    pad = {"input_ids": A.PAD_ID, "boundary": A.BND_UNKNOWN, "dia": A.DIA_UNKNOWN, "punct": A.PUNCT_UNKNOWN}
    for name, value in out.items():
        g = value.gather(1, src)
        if name == "char_target":
            g = torch.where(blank, A.BLANK_ID, g)
        elif name.endswith("_target"):
            g = torch.where(blank, IGNORE_INDEX, g)
        fields[name] = torch.where(inside, g, pad.get(name, IGNORE_INDEX))
    fields["char_weight"] = torch.where(fields["char_target"] != IGNORE_INDEX, weight, 0.0).float()
    draws = {"rate": t, "pattern": pattern, "modes": torch.stack(modes, 1), "k": k, "n_eligible": n_el}
    return {name: fields[name] for name in FIELDS}, lengths_out, draws


def _row_ranges(starts: torch.Tensor, lengths: torch.Tensor, width: int) -> torch.Tensor:
    """Per row, the union of the ranges ``[starts[:, i], starts[:, i] + lengths[:, i])``."""
    S = starts.shape[0]
    diff = torch.zeros(S, width + 1, dtype=torch.int32, device=starts.device)
    on = lengths > 0
    s = torch.where(on, starts, width).clamp(0, width)
    e = torch.where(on, starts + lengths, width).clamp(0, width)
    diff.scatter_add_(1, s, on.to(torch.int32))
    diff.scatter_add_(1, e, -on.to(torch.int32))
    return diff.cumsum(1)[:, :width] > 0


def _span(
    eligible: torch.Tensor,
    n_el: torch.Tensor,
    k: torch.Tensor,
    rows: torch.Tensor,
    cfg: NoiseConfig,
    gen: torch.Generator,
) -> torch.Tensor:
    """Masked positions of the span pattern (rows where ``rows`` is true)."""
    S, W = eligible.shape
    dev = eligible.device
    idx = torch.arange(W, device=dev)[None].expand(S, W)
    if cfg.span_mean <= 1.0:
        lengths = torch.ones(S, W, dtype=torch.long, device=dev)
    else:
        q = 1.0 - 1.0 / cfg.span_mean
        top = 1.0 - q ** int(cfg.span_max)
        u = _rand((S, W), gen, dev).double() * top
        lengths = torch.ceil(torch.log1p(-u) / math.log(q)).long().clamp(1, int(cfg.span_max))
    cum = lengths.cumsum(1)  # W draws of >= 1 reach any k <= W
    s = torch.searchsorted(cum, k[:, None]).squeeze(1) + 1  # spans needed
    s = torch.where(rows & (k > 0), s, 0)
    last = (s - 1).clamp_min(0)
    over = cum.gather(1, last[:, None]).squeeze(1) - k
    lengths = torch.where(idx < s[:, None], lengths, 0)
    lengths = lengths - torch.where(idx == last[:, None], over[:, None], 0) * (s > 0)[:, None]
    offs = lengths.cumsum(1) - lengths
    # s block slots among n - k + s, uniformly without replacement, in increasing order
    n_slots = n_el - k + s
    sel = (_ranks(torch.where(idx < n_slots[:, None], _rand((S, W), gen, dev), 2.0)) < s[:, None])
    ordinal = (sel.long().cumsum(1) - 1).clamp_min(0)
    starts = torch.where(sel, idx - ordinal + offs.gather(1, ordinal), 0)
    lens = torch.where(sel, lengths.gather(1, ordinal), 0)
    masked_el = _row_ranges(starts, lens, W) & (idx < n_el[:, None])
    # eligible index -> position
    elig_pos = torch.argsort((~eligible).to(torch.int8), dim=1, stable=True)
    return torch.zeros_like(eligible).scatter_(1, elig_pos, masked_el) & eligible


__all__ = ["FIELDS", "corrupt_batch"]
