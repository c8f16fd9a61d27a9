"""``stoicheia serve``: a local web page for editors (paste Leiden text or upload EpiDoc).

:mod:`.engine` runs the pipeline (one per server, one request at a time), :mod:`.render`
writes the page, :mod:`.app` is the Starlette application, :mod:`.measure` times the page
in headless Chromium. Every asset ships in ``static/``; nothing is fetched from the internet.
"""

from __future__ import annotations

from .app import create_app
from .engine import Analysis, Engine, load_serving_pipeline

__all__ = ["Analysis", "Engine", "create_app", "load_serving_pipeline", "serve"]


def serve(model: str | None = None, *, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Load the pipeline, then serve the page on ``host:port`` until interrupted."""
    import uvicorn

    engine = Engine(model)
    engine.nlp  # load once, before the first request  # noqa: B018
    uvicorn.run(create_app(engine), host=host, port=port, log_level="warning",
                h11_max_incomplete_event_size=1 << 20)  # long ?text= permalinks
