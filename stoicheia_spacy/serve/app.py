"""The Starlette application: one page, its downloads and its static assets.

- ``GET /``: the form; with ``?text=`` it runs on load (a permalink);
- ``POST /``: the form sent (``text``, or an EpiDoc ``file``);
- ``GET /download/{token}/{kind}``: EpiDoc, CoNLL-U or JSON of a recent analysis;
- ``GET /static/...``: the stylesheet and script shipped in the package.

Bad input is answered with the page, a readable message and 400 (413 when too large);
any other failure with 500 and a message, never a traceback.
"""

from __future__ import annotations

import logging
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import StoicheiaError
from .engine import MAX_UPLOAD, Analysis, Engine, TooLargeError
from .render import page

STATIC = Path(__file__).resolve().parent / "static"
log = logging.getLogger(__name__)


def create_app(engine: Engine) -> Starlette:
    """The app serving ``engine``'s pipeline."""

    def label() -> str:
        return engine.model or "default pipeline"

    async def answer(text: str, run: object) -> HTMLResponse:
        try:
            analysis: Analysis = await run_in_threadpool(run)  # type: ignore[arg-type]
        except TooLargeError as exc:
            return HTMLResponse(page(text=text, error=str(exc), model=label()), status_code=413)
        except StoicheiaError as exc:
            return HTMLResponse(page(text=text, error=str(exc), model=label()), status_code=400)
        except Exception:  # never a traceback on the page
            log.exception("analysis failed")
            return HTMLResponse(page(text=text, error="the pipeline failed on this input (see the server log)",
                                     model=label()), status_code=500)
        shown = text if analysis.epidoc is None else ""
        return HTMLResponse(page(text=shown, analysis=analysis, model=label()))

    async def home(request: Request) -> Response:
        text = request.query_params.get("text")
        if text is None:
            return HTMLResponse(page(model=label()))
        return await answer(text, lambda: engine.analyse_text(text))

    async def submit(request: Request) -> Response:
        try:
            form = await request.form(max_files=1, max_fields=4, max_part_size=MAX_UPLOAD + 1)
        except HTTPException as exc:
            return HTMLResponse(page(error=f"the form could not be read: {exc.detail}", model=label()),
                                status_code=400 if exc.status_code < 500 else 413)
        upload = form.get("file")
        text = form.get("text")
        text = text if isinstance(text, str) else ""
        if isinstance(upload, UploadFile) and upload.filename:
            data = await upload.read(MAX_UPLOAD + 1)
            name = Path(upload.filename).name
            return await answer(text, lambda: engine.analyse_epidoc(data, name))
        return await answer(text, lambda: engine.analyse_text(text))

    async def download(request: Request) -> Response:
        item = engine.download(request.path_params["token"], request.path_params["kind"])
        if item is None:
            return PlainTextResponse("This download is no longer kept: run the text again.", status_code=404)
        return Response(item.data, media_type=item.media_type,
                        headers={"Content-Disposition": f'attachment; filename="{item.filename}"'})

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        return PlainTextResponse(f"{status}: nothing here", status_code=status)

    return Starlette(routes=[
        Route("/", home, methods=["GET"]),
        Route("/", submit, methods=["POST"]),
        Route("/download/{token}/{kind}", download, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ], exception_handlers={404: not_found, 405: not_found})
