"""Tiny synthetic checkpoints in the exact released task layouts (golden tiny backbone,
re-prefixed, plus random task tensors)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from tests.conftest import TINY

D, DEPTH = 64, 4
XPOS_SIZES = (14, 4, 4, 8, 8, 5, 5, 6, 3)
#: The released per-position alphabets in an order different from ours (reversed).
XPOS_ALPHA = ["-lnapvdrcmigux"[::-1], "-123"[::-1], "-spd"[::-1], "-pirltfa"[::-1], "-isnmpog"[::-1],
              "-apme"[::-1], "-mfnc"[::-1], "-ngdav"[::-1], "-cs"[::-1]]
UPOS = list("acdgilmnpruvx")
TAGS = ["n-s---mn-", "v3spia---", "l-s---mn-", "l-s---ma-", "n-s---ma-", "u--------", "d--------"]
SCRIPTS = [[0, "", 0, "", 0], [0, "", 2, "ος", 0], [0, "", 2, "ω", 0], [0, "", 1, "", 1], [0, "", 3, "ό", 0]]
DEPRELS = ["PRED", "SBJ", "OBJ", "ATR", "AuxK"]


def _backbone() -> tuple[dict, dict[str, torch.Tensor]]:
    config = json.loads((TINY / "config.json").read_text())
    return config, load_file(str(TINY / "model.safetensors"))


def _rand(*shape: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen) * 0.5


def _write(out: Path, config: dict, tensors: dict[str, torch.Tensor]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config))
    save_file({k: v.contiguous() for k, v in tensors.items()}, str(out / "model.safetensors"))
    return out


def meter_checkpoint(out: Path, *, scalar_mix: bool = True, seed: int = 0) -> Path:
    gen = torch.Generator().manual_seed(seed)
    config, base = _backbone()
    config.update(model_type="char_bert_meter", use_cap=True, scalar_mix=scalar_mix)
    tensors = {f"encoder.{k}": v for k, v in base.items()}
    tensors["encoder.cap_emb.weight"] = _rand(2, D, gen=gen)
    tensors["encoder.norm_out.w"] = 1.0 + _rand(D, gen=gen)  # not the identity, so its use is tested
    tensors["head_mac.weight"] = _rand(2, D, gen=gen)
    tensors["head_scan.weight"] = _rand(4, D, gen=gen)
    if scalar_mix:
        tensors["mix_w"] = _rand(DEPTH + 1, gen=gen) * 4
    return _write(out, config, tensors)


def restoration_checkpoint(out: Path, seed: int = 0) -> Path:
    gen = torch.Generator().manual_seed(seed)
    config, base = _backbone()
    config.update(n_region=15, n_century=15)
    tensors = dict(base)
    tensors["e_region.weight"] = _rand(15, D, gen=gen)
    tensors["e_century.weight"] = _rand(15, D, gen=gen)
    return _write(out, config, tensors)


def tagger_parser_checkpoint(out: Path, seed: int = 0, d_arc: int = 500, d_rel: int = 150) -> Path:
    gen = torch.Generator().manual_seed(seed)
    config, base = _backbone()
    config.update(model_type="char_bert_joint", use_cap=True, pool="mean", head_dropout=0.33, scalar_mix=True,
                  xpos_len=9, n_xpos_classes=list(XPOS_SIZES), n_script=len(SCRIPTS), n_upos=len(UPOS),
                  use_flat=True, n_flat_tags=len(TAGS), d_arc=d_arc, d_rel=d_rel, n_labels=len(DEPRELS),
                  parse_dropout=0.33, max_chars=2048, max_words=256)
    tensors = {f"tagger.encoder.{k}": v for k, v in base.items()}
    tensors["tagger.encoder.cap_emb.weight"] = _rand(2, D, gen=gen)
    tensors["tagger.encoder.norm_out.w"] = 1.0 + _rand(D, gen=gen)
    tensors["tagger.mix_w"] = _rand(DEPTH + 1, gen=gen) * 4
    for p, n in enumerate(XPOS_SIZES):
        tensors[f"tagger.xpos_heads.{p}.weight"] = _rand(n, D, gen=gen)
    tensors["tagger.head_flat.weight"] = _rand(len(TAGS), D, gen=gen)
    tensors["tagger.head_script.weight"] = _rand(len(SCRIPTS), D, gen=gen)
    tensors["tagger.head_upos.weight"] = _rand(len(UPOS), D, gen=gen)
    tensors["biaffine.root"] = _rand(D, gen=gen)
    for name, width in (("arc_dep", d_arc), ("arc_head", d_arc), ("rel_dep", d_rel), ("rel_head", d_rel)):
        tensors[f"biaffine.{name}.lin.weight"] = _rand(width, D, gen=gen) * 0.3
        tensors[f"biaffine.{name}.lin.bias"] = _rand(width, gen=gen)
    tensors["biaffine.arc_biaf.W"] = _rand(1, d_arc + 1, d_arc, gen=gen) * 0.1
    tensors["biaffine.rel_biaf.W"] = _rand(len(DEPRELS), d_rel + 1, d_rel + 1, gen=gen) * 0.1
    _write(out, config, tensors)
    vocab = {"scripts": SCRIPTS, "xpos_alpha": XPOS_ALPHA, "tags": TAGS, "upos": UPOS,
             "lex_ft": {"λόγον\tn-s---ma-": {"λόγος": 3}}, "lex_f": {"ἄνθρωπος": {"ἄνθρωπος": 5}},
             "fallbacks": {}}
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    (out / "deprel_vocab.json").write_text(json.dumps(DEPRELS))
    return out


def copy_of(src: Path, out: Path) -> Path:
    shutil.copytree(src, out)
    return out
