"""Released tagger-parser (``char_bert_joint``) -> morphologizer, lemmatizer and parser.

Published formula (backbone under ``tagger.encoder.``): word vector ``w`` = mean over the
word's letters of the released scalar mix (:mod:`stoicheia_spacy.encoder.released_pooler`);
``xpos_p = tagger.xpos_heads.p · w`` (9 positions, classes in ``vocab.json``
``xpos_alpha[p]`` order), ``upos = tagger.head_upos · w`` (Perseus POS letters,
``vocab.json`` ``upos``), ``script = tagger.head_script · w``; parser (Dozat-Manning):
``a_dep = lrelu(arc_dep(w))``, ``a_head = lrelu(arc_head([root; w]))``,
``arc[i, j] = [a_dep_i; 1] · W_arc · a_head_j``, ``rel[i, j] = [r_dep_i; 1] · W_rel ·
[r_head_j; 1]``. All of it maps exactly onto our components (``hidden_width = 0``
token heads, :class:`~stoicheia_spacy.morph.biaffine.BiaffineScorer`):

- morphologizer: the nine XPOS heads, rows permuted from ``xpos_alpha`` into our
  :data:`~stoicheia_spacy.morph.agdt_tags.XPOS_ALPHABETS` order; the UPOS head's
  13 POS letters become their UD tags (a→ADJ … x→X), UD tags the release cannot
  predict (AUX, PROPN, SCONJ, SYM) get bias ``-1e4``; attested tags = ``vocab.json``
  ``tags`` (those valid under the AGDT alphabets).
- lemmatizer: ``head_script`` with ``vocab.json`` ``scripts`` (``cap`` 0/1 = lower /
  title), lexicon = every lemma of ``lex_ft``/``lex_f``.
- parser: relations from ``deprel_vocab.json``.

Decoders (each component's ``decode`` setting; the packaged default is ``"research"``, see
:mod:`stoicheia_spacy.morph.research_decode`): ``research`` is the authors' evaluation
route (constrained XPOS with the flat head ``tagger.head_flat``, kept as extra rows of the
morphologizer's output layer; UPOS from its own head; the research lemma procedure over
``lex_ft``/``lex_f`` with their counts; a maximum spanning tree with as many root words
as the scores give), ``paper`` what the paper's tables scored (argmaxes, greedy heads).
The encoder of a packaged tagger-parser reads words encoded one by one, planes as written
(``planes = "tokens"``, :mod:`stoicheia_spacy.encoder.token_planes`); tokens without a Greek
letter get no word slot in the parse and take the research rule fallback.

Not from the release: under the morphologizer's own ``joint`` decoder and the lemmatizer's
``topk_lexicon`` (the embedded default's decoders) the flat head is unused and the lexicon
is a set of lemmas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from spacy.language import Language

from ..backbone.released import ReleasedCheckpoint, ReleasedComponents
from ..errors import CheckpointError, ConfigError, InvalidInputError
from ..heads import torch_module
from .agdt_tags import is_valid_tag
from .lemma_scripts import EditScript
from .research_decode import RELEASE_DECODERS, check_decode
from .ud import MORPH_GROUPS, UPOS_TAGS, XPOS_ALPHABETS, XPOS_GROUPS

#: Perseus POS letter (the release's ``upos``) -> UD UPOS.
POS_TO_UPOS: dict[str, str] = {
    "a": "ADJ", "c": "CCONJ", "d": "ADV", "g": "PART", "i": "INTJ", "l": "DET", "m": "NUM",
    "n": "NOUN", "p": "PRON", "r": "ADP", "u": "PUNCT", "v": "VERB", "x": "X",
}
#: Bias of output rows the release has no weights for.
ABSENT = -1e4
LISTENER = {"grad_factor": 0.0, "pooling": {"@architectures": "stoicheia.ReleasedWordPooler.v1"}}


def read_vocab(directory: Path) -> tuple[dict[str, Any], list[str]]:
    """``vocab.json`` and the relation list of ``deprel_vocab.json`` (list, or label->id map)."""
    out = []
    for name in ("vocab.json", "deprel_vocab.json"):
        path = directory / name
        if not path.is_file():
            raise CheckpointError(f"tagger-parser checkpoint {directory} has no {name}")
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointError(f"invalid {path}: {exc}") from exc
    vocab, deprel = out
    if isinstance(deprel, dict) and "labels" in deprel:
        deprel = deprel["labels"]
    if isinstance(deprel, dict):
        deprel = [k for k, _ in sorted(deprel.items(), key=lambda kv: int(kv[1]))]
    if not isinstance(vocab, dict) or not isinstance(deprel, list) or not all(isinstance(x, str) for x in deprel):
        raise CheckpointError(f"{directory}: vocab.json must be an object and deprel_vocab.json a label list")
    for key in ("scripts", "xpos_alpha", "tags", "upos"):
        if key not in vocab:
            raise CheckpointError(f"{directory}/vocab.json lacks {key!r}")
    return vocab, deprel


def read_fallbacks(vocab: dict[str, Any]) -> tuple[dict[str, list[str]], str, str]:
    """The rule table for tokens without a Greek letter (form -> [lemma, POS letter, tag]) and
    the fallback POS letter and tag, from ``vocab.json``: the research keys ``nongreek``,
    ``fallback_upos``, ``fallback_xpos``, or the same inside a ``fallbacks`` object (whose
    other three-string entries are read as rule-table rows)."""
    table: dict[str, list[str]] = {}
    upos, xpos = str(vocab.get("fallback_upos", "u")), str(vocab.get("fallback_xpos", "u--------"))
    for source in (vocab.get("fallbacks"), vocab):
        if not isinstance(source, dict):
            continue
        rows = source.get("nongreek")
        if source is not vocab and not isinstance(rows, dict):
            rows = {k: v for k, v in source.items() if k not in ("fallback_upos", "fallback_xpos")}
        for form, row in (rows or {}).items():
            if isinstance(row, (list, tuple)) and len(row) == 3 and all(isinstance(x, str) for x in row):
                table.setdefault(form, list(row))
        if source is not vocab:
            upos, xpos = str(source.get("fallback_upos", upos)), str(source.get("fallback_xpos", xpos))
    return table, upos, xpos


def morph_weights(ckpt: ReleasedCheckpoint, vocab: dict[str, Any], d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight ``(17 + 57, d)`` and bias of the morphologizer's linear head."""
    weight = torch.zeros(sum(MORPH_GROUPS), d)
    bias = torch.full((sum(MORPH_GROUPS),), ABSENT)
    upos = list(vocab["upos"])
    w_upos = ckpt.tensor("tagger.head_upos.weight", (len(upos), d))
    for row, letter in enumerate(upos):
        tag = POS_TO_UPOS.get(letter, letter if letter in UPOS_TAGS else "")
        if not tag:
            raise CheckpointError(f"vocab.json upos {letter!r} has no UD tag")
        weight[UPOS_TAGS.index(tag)] = w_upos[row]
        bias[UPOS_TAGS.index(tag)] = 0.0
    alphas = vocab["xpos_alpha"]
    if len(alphas) != len(XPOS_GROUPS):
        raise CheckpointError(f"vocab.json xpos_alpha has {len(alphas)} positions, expected {len(XPOS_GROUPS)}")
    start = len(UPOS_TAGS)
    for p, (alpha, ours) in enumerate(zip(alphas, XPOS_ALPHABETS, strict=True)):
        chars = list(alpha)
        w = ckpt.tensor(f"tagger.xpos_heads.{p}.weight", (len(chars), d))
        for row, ch in enumerate(chars):
            if ch not in ours:
                raise CheckpointError(f"xpos position {p} class {ch!r} is outside the AGDT inventory {ours!r}")
            weight[start + ours.index(ch)] = w[row]
            bias[start + ours.index(ch)] = 0.0
        start += len(ours)
    return weight, bias


def _install(pipe: Any, d: int, state: dict[str, torch.Tensor]) -> None:
    pipe.data["n_in"] = d
    pipe._build()
    module = torch_module(pipe._head_node())
    module.load_state_dict(state)
    module.eval()


def _init_pooler(pipe: Any, mix: torch.Tensor, norm: torch.Tensor) -> None:
    for node in pipe.model.walk():
        if node.name == "stoicheia_released_pooler":
            node.set_dim("n_layers", int(mix.shape[0]), force=True)
            node.set_dim("nO", int(norm.shape[0]), force=True)
            node.initialize()
            node.set_param("mix", node.ops.asarray1f(mix.numpy()))
            node.set_param("norm", node.ops.asarray1f(norm.numpy()))
        elif node.name == "stoicheia_listener":
            node.set_dim("n_layers", int(mix.shape[0]), force=True)
            node.set_dim("nO", int(norm.shape[0]), force=True)


def tagger_parser_components(ckpt: ReleasedCheckpoint, decode: str = "research") -> ReleasedComponents:
    """Morphologizer, lemmatizer and parser holding the released heads, decoding with
    ``decode`` (``"research"``, the default, or ``"paper"``: see
    :mod:`stoicheia_spacy.morph.research_decode`)."""

    vocab, deprels = read_vocab(ckpt.directory)
    cfg = ckpt.config
    if cfg.get("pool", "mean") != "mean":
        raise CheckpointError(f"{ckpt.directory}: word pooling {cfg['pool']!r} is not supported (only 'mean')")
    d, depth = int(cfg["d_model"]), int(cfg["depth"])
    mix = ckpt.tensor("tagger.mix_w", (depth + 1,))
    norm = ckpt.backbone_tensor("norm_out.w")
    drop = float(cfg.get("head_dropout", 0.33))

    tags = [t for t in vocab["tags"] if is_valid_tag(t)]
    nongreek, fallback_upos, fallback_xpos = read_fallbacks(vocab)
    for tag in vocab["tags"]:
        if not isinstance(tag, str) or len(tag) != len(vocab["xpos_alpha"]) or any(
                ch not in alpha for ch, alpha in zip(tag, vocab["xpos_alpha"], strict=False)):
            raise CheckpointError(f"vocab.json tag {tag!r} is not spelled with the xpos_alpha classes")
    lex_ft, lex_f = dict(vocab.get("lex_ft") or {}), dict(vocab.get("lex_f") or {})
    release = {"xpos_alpha": list(vocab["xpos_alpha"]), "tags": list(vocab["tags"]), "flat": False,
               "nongreek": nongreek, "fallback_upos": fallback_upos, "fallback_xpos": fallback_xpos}
    w, b = morph_weights(ckpt, vocab, d)
    if cfg.get("use_flat", "tagger.head_flat.weight" in ckpt.tensors) and "tagger.head_flat.weight" in ckpt.tensors:
        flat = ckpt.tensor("tagger.head_flat.weight", (len(vocab["tags"]), d))
        release["flat"] = True
        w, b = torch.cat([w, flat]), torch.cat([b, torch.zeros(len(flat))])
    ckpt.ignore(["tagger.head_flat.weight"])

    def fill_morph(morph: Any) -> None:
        _init_pooler(morph, mix, norm)
        morph.data["attested"] = sorted(set(tags))
        morph.data["released_invalid_tags"] = len(vocab["tags"]) - len(tags)
        morph.data["release"] = release
        _install(morph, d, {"out.weight": w, "out.bias": b})

    try:
        scripts = [EditScript.from_list([s[0], s[1], s[2], s[3], int(s[4])]).to_list() for s in vocab["scripts"]]
    except (InvalidInputError, TypeError, ValueError, IndexError) as exc:
        raise CheckpointError(f"vocab.json scripts: {exc}") from exc
    lexicon: set[str] = set()
    for key in ("lex_ft", "lex_f"):
        for cands in (vocab.get(key) or {}).values():
            lexicon.update(cands)
    w_script = ckpt.tensor("tagger.head_script.weight", (len(scripts), d))

    def fill_lemmatizer(lem: Any) -> None:
        _init_pooler(lem, mix, norm)
        lem.data["scripts"] = scripts
        lem.data["lexicon"] = sorted(lexicon)
        lem.data["release"] = {"lex_ft": lex_ft, "lex_f": lex_f, "nongreek": nongreek}
        _install(lem, d, {"out.weight": w_script, "out.bias": torch.zeros(len(scripts))})

    parser_weights = parser_state(ckpt, d, len(deprels))

    def fill_parser(parser: Any) -> None:
        _init_pooler(parser, mix, norm)
        parser.data["labels"] = list(deprels)
        _install(parser, d, parser_weights)

    blocks = {
        "stoicheia_morphologizer": {
            "factory": "stoicheia_morphologizer", "settings": {"decode": decode},
            "model": {"hidden_width": 0, "dropout": drop, "tok2vec": LISTENER}},
        "stoicheia_lemmatizer": {
            "factory": "stoicheia_lemmatizer", "settings": {"top_k": 64, "decode": decode},
            "model": {"hidden_width": 0, "dropout": drop, "tok2vec": LISTENER}},
        "stoicheia_parser": {
            "factory": "stoicheia_parser", "settings": {"decode": decode},
            "model": {"arc_hidden": int(cfg.get("d_arc", 500)), "label_hidden": int(cfg.get("d_rel", 150)),
                      "dropout": float(cfg.get("parse_dropout", 0.33)), "tok2vec": LISTENER}},
    }
    return ReleasedComponents(blocks, {"stoicheia_morphologizer": fill_morph, "stoicheia_lemmatizer": fill_lemmatizer,
                                       "stoicheia_parser": fill_parser})


def parser_state(ckpt: ReleasedCheckpoint, d: int, n_labels: int) -> dict[str, torch.Tensor]:
    """The :class:`~stoicheia_spacy.morph.biaffine.BiaffineScorer` state dict of the released parser."""
    cfg = ckpt.config
    arc, rel = int(cfg.get("d_arc", 500)), int(cfg.get("d_rel", 150))
    w_arc = ckpt.tensor("biaffine.arc_biaf.W", (1, arc + 1, arc))
    state = {
        "root": ckpt.tensor("biaffine.root", (d,)),
        "arc_weight": w_arc[0, :arc], "arc_bias": w_arc[0, arc],
        "label_weight": ckpt.tensor("biaffine.rel_biaf.W", (n_labels, rel + 1, rel + 1)),
    }
    for ours, theirs, width in (("arc_dep", "arc_dep", arc), ("arc_head", "arc_head", arc),
                                ("label_dep", "rel_dep", rel), ("label_head", "rel_head", rel)):
        state[f"{ours}.linear.weight"] = ckpt.tensor(f"biaffine.{theirs}.lin.weight", (width, d))
        state[f"{ours}.linear.bias"] = ckpt.tensor(f"biaffine.{theirs}.lin.bias", (width,))
    return {k: v.contiguous() for k, v in state.items()}


def reference_logits(ckpt: ReleasedCheckpoint, words: np.ndarray) -> dict[str, np.ndarray]:
    """Published head formulas on word vectors ``words (n, d)`` (float64 numpy, for checks)."""
    def t(name: str) -> np.ndarray:
        return ckpt.tensors[name].double().numpy()

    out = {"upos": words @ t("tagger.head_upos.weight").T, "script": words @ t("tagger.head_script.weight").T}
    for p in range(len(XPOS_GROUPS)):
        out[f"xpos{p}"] = words @ t(f"tagger.xpos_heads.{p}.weight").T

    def mlp(name: str, x: np.ndarray) -> np.ndarray:
        y = x @ t(f"biaffine.{name}.lin.weight").T + t(f"biaffine.{name}.lin.bias")
        return np.where(y > 0, y, 0.1 * y)

    heads_in = np.concatenate([t("biaffine.root")[None], words], 0)
    dep = np.concatenate([mlp("arc_dep", words), np.ones((len(words), 1))], 1)
    out["arc"] = dep @ t("biaffine.arc_biaf.W")[0] @ mlp("arc_head", heads_in).T  # (n, n + 1)
    rd = np.concatenate([mlp("rel_dep", words), np.ones((len(words), 1))], 1)
    rh = np.concatenate([mlp("rel_head", heads_in), np.ones((len(words) + 1, 1))], 1)
    out["rel"] = np.einsum("xi,oij,yj->xyo", rd, t("biaffine.rel_biaf.W"), rh)  # (n, n + 1, L)
    return out


#: The components whose ``decode`` setting :func:`set_decode` switches, with their own decoders.
OWN_DECODERS: dict[str, tuple[str, ...]] = {
    "stoicheia_morphologizer": ("joint",), "stoicheia_lemmatizer": ("topk_lexicon",),
    "stoicheia_parser": ("mst_single_root",),
}


def set_decode(nlp: Language, decode: str) -> list[str]:
    """Switch the morphologizer, lemmatizer and parser of ``nlp`` to ``decode`` (``"research"``
    or ``"paper"``, or a component's own decoder) for this session; returns the names switched.

    The release decoders need a released tagger-parser checkpoint's tables: a pipeline
    without them raises :class:`~stoicheia_spacy.errors.ConfigError`. (To keep a setting in
    a saved pipeline, set ``decode`` in its ``[components.NAME.settings]`` block instead.)
    """
    pipes = [(name, nlp.get_pipe(name), nlp.get_pipe_meta(name).factory) for name in nlp.pipe_names]
    pipes = [(name, pipe, factory) for name, pipe, factory in pipes if factory in OWN_DECODERS]
    if not pipes:
        raise ConfigError("the pipeline has no morphologizer, lemmatizer or parser to decode with")
    if decode in RELEASE_DECODERS and not any(getattr(p, "data", {}).get("release") for _, p, _ in pipes):
        raise ConfigError(f"decode = {decode!r} needs a released tagger-parser checkpoint (this pipeline "
                          "holds none of its tables); package one with stoicheia package")
    for _, _, factory in pipes:
        check_decode(decode, OWN_DECODERS[factory])
    for _, pipe, _ in pipes:
        cast(Any, pipe).configure(decode=decode)
    return [name for name, _, _ in pipes]
