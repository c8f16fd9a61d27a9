"""Continue pretraining from weights in the released format, with a fresh schedule.

``STOICHEIA_INIT_FROM=DIR python scripts/continue_from.py train ...`` takes the same
arguments as ``python -m pretrain``; the model is built from the run's config and then
loaded with the weights of DIR (a second stage after a run that ended early).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pretrain.trainer as trainer
from pretrain.__main__ import main
from stoicheia_spacy.backbone import load_backbone

_build = trainer.build_model


def _build_from_weights(model_config: Any) -> Any:
    model = _build(model_config)
    source = load_backbone(os.environ["STOICHEIA_INIT_FROM"])
    model.load_state_dict(source.state_dict())
    return model


trainer.build_model = _build_from_weights  # type: ignore[assignment]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
