"""The encoder room: the ``stoicheia_encoder`` component (:mod:`.pipe`), its Thinc architecture
(:mod:`.model`), the listener and backbone reference the heads read it through, the word poolers,
the backbone loader, the ``stoicheia_diffusion`` component and the Doc data they share (:mod:`.types`)."""

from __future__ import annotations

from . import serialize as _serialize  # noqa: F401  (msgpack encoders: Docs can leave the process)
