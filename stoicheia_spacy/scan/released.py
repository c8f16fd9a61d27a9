"""Released meter / macronizer heads -> a ``stoicheia_scanner`` with linear heads.

Published formula (``encoder.*`` backbone): ``h = Σ softmax(mix_w)_l · layer_l`` over the
``depth`` raw block outputs and the final-RMSNormed last one (see
:mod:`stoicheia_spacy.encoder.released_pooler`), or the normed last layer alone when the scalar
mix is off; ``mac = head_mac · h`` (rows: long, short), ``scan = head_scan · h`` (rows:
none, heavy-end, light-end, verse-end), no biases. The scanner's ``hidden = 0`` heads
(:class:`~stoicheia_spacy.scan.model.ScannerHeads`) compute exactly this; the macron
rows are swapped into the scanner's order (short, long). The scanner decodes as the
authors evaluate the release (``decode = "research"``, :mod:`stoicheia_spacy.scan.research`);
set ``decode = "lattice"`` for our rule syllables and metre lattice.
"""

from __future__ import annotations

from typing import Any

import torch

from ..backbone.released import ReleasedCheckpoint, ReleasedComponents
from ..errors import CheckpointError
from .model import ScannerHeads, heads_node, make_heads

#: Mix logit that makes a layer's softmax weight exactly 0 in float32.
OFF = -1e9


def scanner_heads(ckpt: ReleasedCheckpoint) -> ScannerHeads:
    """The scanner's torch heads holding the released meter tensors."""
    cfg = ckpt.config
    d, depth = int(cfg["d_model"]), int(cfg["depth"])
    mac = ckpt.tensor("head_mac.weight", (2, d))
    scan = ckpt.tensor("head_scan.weight", (4, d))
    if "mix_w" in ckpt.tensors:
        mix = ckpt.tensor("mix_w", (depth + 1,))
    elif cfg.get("scalar_mix"):
        raise CheckpointError(f"{ckpt.directory}: config has scalar_mix but the checkpoint has no mix_w")
    else:
        mix = torch.full((depth + 1,), OFF)
        mix[-1] = 0.0
    heads = ScannerHeads(depth + 1, d, hidden=0, dropout=0.0)
    with torch.no_grad():
        heads.mix.copy_(mix)
        heads.final_norm.copy_(ckpt.backbone_tensor("norm_out.w"))
        heads.macron.weight.copy_(mac[[1, 0]])  # released (long, short) -> scanner (short, long)
        heads.macron.bias.zero_()
        heads.scan.weight.copy_(scan)
        heads.scan.bias.zero_()
    return heads.eval()


def meter_components(ckpt: ReleasedCheckpoint, name: str = "stoicheia_scanner") -> ReleasedComponents:
    """A ``stoicheia_scanner`` (frozen listener, released heads) after the encoder."""

    heads = scanner_heads(ckpt)

    def fill(pipe: Any) -> None:
        make_heads(heads_node(pipe.model), int(heads.config["n_layers"]), int(heads.config["d_model"]), heads)

    block = {"factory": "stoicheia_scanner", "model": {"hidden": 0, "dropout": 0.0, "grad_factor": 0.0},
             "settings": {"decode": "research"},
             "lexicon": None}  # the research decode reads no macron lexicon
    return ReleasedComponents({name: block}, {name: fill})
