"""The one wrapper that turns rendered HTML fragments into a page (restorations, dates)."""

from __future__ import annotations

from pathlib import Path


def finish_html(body: str, *, title: str, style: str, page: bool, path: str | Path | None) -> str:
    """``body`` alone, or (``page``) a full UTF-8 document with ``style``; ``path`` also writes it."""
    out = body
    if page:
        out = (f'<!DOCTYPE html><html lang="grc"><head><meta charset="utf-8"><title>{title}</title>'
               f"<style>{style}</style></head><body>{body}</body></html>")
    if path is not None:
        Path(path).write_text(out, encoding="utf-8")
    return out
