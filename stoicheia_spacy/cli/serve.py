"""``stoicheia serve``: the editor's web page on this machine (see :mod:`stoicheia_spacy.serve`)."""

from __future__ import annotations

import typer
from wasabi import Printer


def serve_command(
    model: str = typer.Option(None, "--model", help="Pipeline: installed package or directory (default: "
                              "grc_stoicheia_doc_clean when installed, else the embedded default model)"),
    source: str = typer.Option(None, "--source", help="Or a backbone checkpoint (hub id, directory or embedded:NAME) "
                               "with the components shipped beside it (a restorer and an accentuator at least)"),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default: this machine only)"),
    port: int = typer.Option(8080, "--port", help="Port"),
) -> None:
    """Serve a web page where an editor pastes Leiden text or uploads an EpiDoc file.

    Example: stoicheia serve --port 8080   (then open http://127.0.0.1:8080/)
    """
    from ..errors import StoicheiaError
    from ..serve import serve

    msg = Printer()
    if model and source:
        raise typer.BadParameter("give --model (a pipeline) or --source (a checkpoint), not both", param_hint="--source")
    if not 0 < port < 65536:
        raise typer.BadParameter(f"{port} is not a port number", param_hint="--port")
    msg.info(f"Loading the pipeline, then serving http://{host}:{port}/ (Ctrl-C stops)")
    try:
        serve(source or model, host=host, port=port)
    except StoicheiaError as exc:
        msg.fail(f"{type(exc).__name__}: {exc}", exits=1)
