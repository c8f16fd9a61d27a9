"""``stoicheia serve``: the editor's web page on this machine (see :mod:`stoicheia_spacy.serve`)."""

from __future__ import annotations

import typer

from .options import deprecated_model, model_option, printer, source_option


def serve_command(
    model: str = model_option(),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (default: this machine only)"),
    port: int = typer.Option(8080, "--port", metavar="N", help="Port"),
    source: str = source_option(),
) -> None:
    """Serve a web page where an editor pastes Leiden text or uploads an EpiDoc file.

    The pipeline needs a restorer and an accentuator at least (a checkpoint brings those
    shipped beside it).

    Example: stoicheia serve --port 8080   (then open http://127.0.0.1:8080/)
    """
    from ..serve import serve

    if model and source:
        raise typer.BadParameter("give --model (a pipeline or a checkpoint) alone: --source is its deprecated "
                                 "spelling, not both", param_hint="--source")
    if not 0 < port < 65536:
        raise typer.BadParameter(f"{port} is not a port number", param_hint="--port")
    printer().info(f"Loading the pipeline, then serving http://{host}:{port}/ (Ctrl-C stops)")
    serve(deprecated_model(model, source), host=host, port=port)
