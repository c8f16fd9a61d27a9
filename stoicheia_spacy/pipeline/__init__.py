"""spaCy pipeline components of stoicheia-spacy (factories register on import)."""

from __future__ import annotations

from .. import models as _models  # noqa: F401  (registers the architectures the factories use)
from . import accentuator as _accentuator  # noqa: F401  (registers stoicheia_accentuator)
from . import diffusion as _diffusion  # noqa: F401  (registers stoicheia_diffusion)
from . import lemmatizer as _lemmatizer  # noqa: F401  (registers stoicheia_lemmatizer)
from . import morphologizer as _morphologizer  # noqa: F401  (registers stoicheia_morphologizer)
from . import parser as _parser  # noqa: F401  (registers stoicheia_parser)
from . import restorer as _restorer  # noqa: F401  (registers stoicheia_restorer)
from . import scanner as _scanner  # noqa: F401  (registers stoicheia_scanner)
from . import serialize as _serialize  # noqa: F401  (msgpack encoders: Docs can leave the process)
from .encoder import StoicheiaEncoderPipe, make_stoicheia_encoder

__all__ = ["StoicheiaEncoderPipe", "make_stoicheia_encoder"]
