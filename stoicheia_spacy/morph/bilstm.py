"""``stoicheia.BiLSTMEncoder.v1``: spaCy's ``spacy.TorchBiLSTMEncoder.v1`` over packed sentences.

spaCy's encoder runs ``torch.nn.LSTM`` over the batch padded to its longest Doc: every step of
the padding is computed (on UD Perseus test batches of 32 sentences, 2.8 times the real tokens),
and the backward direction of every shorter Doc reads the padding before its own last token, so
a Doc's vectors depend on the batch it came in. This one packs the sentences
(:func:`torch.nn.utils.rnn.pack_padded_sequence`): each Doc is read from its own last token,
alike in any batch, and no padded step is computed (0.58× the CPU time there). The layers,
dimensions and weights are spaCy's (the same thinc nodes and ``torch.nn.LSTM`` state dict), so
heads trained with spaCy's encoder load into it unchanged. The default pipeline's morphologizer
reads its sentences so (its tags as good as padded, ``projects/parse/metrics/parse_eval_packed_bilstm.json``);
its parser keeps spaCy's padded encoder, with which it was trained and parses 0.1-0.7 LAS better there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import torch
from spacy.util import registry
from thinc.api import ArgsKwargs, Model, PyTorchRNNWrapper, noop, torch2xp, with_padded, xp2torch
from thinc.shims import PyTorchShim
from thinc.types import Floats2d, Padded
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class PackedLSTM(torch.nn.LSTM):
    """``torch.nn.LSTM`` (same parameters and state dict) whose ``forward(x, lengths)`` reads
    the padded ``x (T, B, d)`` as ``B`` sequences of ``lengths`` and pads its output back to ``T``."""

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        y, _ = super().forward(packed)
        out, _ = pad_packed_sequence(y, total_length=x.shape[0])
        return out, None


def _packed_inputs(model: Model, Xp: Padded, is_train: bool) -> tuple[ArgsKwargs, Callable[[Any], Padded]]:
    shim = cast(PyTorchShim, model.shims[0])
    size_at_t, lengths, indices = Xp.size_at_t, Xp.lengths, Xp.indices

    def backward(d_inputs: ArgsKwargs) -> Padded:
        return Padded(cast(Any, torch2xp(d_inputs.args[0])), size_at_t, lengths, indices)

    x = xp2torch(Xp.data, requires_grad=is_train, device=shim.device)
    return ArgsKwargs(args=(x, torch.as_tensor(model.ops.to_numpy(lengths), dtype=torch.int64)), kwargs={}), backward


@registry.architectures("stoicheia.BiLSTMEncoder.v1")
def build_bilstm_encoder(width: int, depth: int, dropout: float) -> Model[list[Floats2d], list[Floats2d]]:
    """Bidirectional LSTM layers of ``width`` (input and output, ``width // 2`` a direction),
    ``depth`` layers, ``dropout`` between them: spaCy's ``TorchBiLSTMEncoder`` over packed
    sentences (module doc)."""
    if depth == 0:
        return noop()
    rnn = PyTorchRNNWrapper(PackedLSTM(width, width // 2, depth, bidirectional=True, dropout=dropout),
                            convert_inputs=_packed_inputs)
    rnn.set_dim("nO", width)
    rnn.set_dim("nI", width)
    return with_padded(with_padded(rnn))
