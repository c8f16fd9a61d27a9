"""``stoicheia corpus STEP``: fetch, normalize, tiers, folds, doc-clean, verify, report.

The steps of ``projects/corpus`` (folder layout in :mod:`stoicheia_lab.corpus.pipeline`);
``python -m stoicheia_lab.corpus STEP`` is the same application. Each step prints its
result as JSON; a :class:`~stoicheia_spacy.errors.StoicheiaError` exits with status 1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from stoicheia_spacy.cli.command import Command

from ..corpus.sources import SOURCES

corpus_app = typer.Typer(name="corpus", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                         help="Build the pretraining corpus: open sources, tiers, ten decontaminated folds.")

#: A registered corpus source (``stoicheia_lab.corpus.sources.SOURCES``).
SourceName = Enum("SourceName", {name: name for name in SOURCES}, type=str)  # type: ignore[misc]


def _run(step: Callable[[], Any]) -> None:
    from stoicheia_spacy.errors import StoicheiaError

    try:
        result = step()
    except StoicheiaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(json.dumps(result, ensure_ascii=False, indent=1)[:4000])


@corpus_app.command("fetch", cls=Command)
def fetch_command(
    dest: Path = typer.Option(..., "--dest", help="Folder the assets are copied to"),
    mirror: Path = typer.Option(None, "--mirror", help="Asset mirror (default: $STOICHEIA_ASSET_MIRROR)"),
    sources: list[SourceName] = typer.Option(None, "--sources", help="Sources to fetch (repeat; default: all)"),
) -> None:
    """Copy (from the mirror) or download the corpus assets.

    Example: stoicheia corpus fetch --dest assets
    """
    from ..corpus.fetch import fetch_all

    names = [s.value for s in sources] if sources else None
    _run(lambda: [str(p) for p in fetch_all(dest, names, mirror)])


@corpus_app.command("normalize", cls=Command)
def normalize_command(
    assets: Path = typer.Option(..., "--assets", help="Folder of fetched assets"),
    corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder"),
    limit: int = typer.Option(0, "--limit", help="Records per source (0 = all)"),
) -> None:
    """Read the sources, write normalized records and statistics.

    Example: stoicheia corpus normalize --assets assets --corpus corpus --limit 200
    """
    from ..corpus import pipeline

    _run(lambda: pipeline.step_normalize(assets, corpus, limit or None))


@corpus_app.command("tiers", cls=Command)
def tiers_command(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder"),
    lexicon: Path = typer.Option(None, "--lexicon", help="Word list for the cleanliness score"),
    threshold: float = typer.Option(None, "--threshold", help="Pristine (gold) threshold (default 0.95)"),
) -> None:
    """Score cleanliness: pristine (gold) or repaired (silver).

    Example: stoicheia corpus tiers --corpus corpus --lexicon assets/lexicon.txt
    """
    from ..corpus import pipeline
    from ..corpus.tiers import PRISTINE_THRESHOLD

    _run(lambda: pipeline.step_tiers(corpus, lexicon, PRISTINE_THRESHOLD if threshold is None else threshold))


@corpus_app.command("folds", cls=Command)
def folds_command(corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder")) -> None:
    """Cluster works, assign zones and write the ten decontaminated folds.

    Example: stoicheia corpus folds --corpus corpus
    """
    from ..corpus import pipeline

    _run(lambda: pipeline.step_folds(corpus))


@corpus_app.command("doc-clean", cls=Command)
def doc_clean_command(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder"),
    blocklist: Path = typer.Option(None, "--blocklist", help="Passages that must never be trained on"),
) -> None:
    """Write the documentary-clean pretraining corpus.

    Example: stoicheia corpus doc-clean --corpus corpus --blocklist blocklist.txt
    """
    from ..corpus import pipeline

    _run(lambda: pipeline.step_doc_clean(corpus, blocklist))


@corpus_app.command("verify", cls=Command)
def verify_command(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder"),
    blocklist: Path = typer.Option(None, "--blocklist", help="Passages that must never be trained on"),
) -> None:
    """Prove zero leakage of the written corpora; writes manifests/.

    Example: stoicheia corpus verify --corpus corpus --blocklist blocklist.txt
    """
    from ..corpus import pipeline

    _run(lambda: pipeline.step_verify(corpus, blocklist))


@corpus_app.command("report", cls=Command)
def report_command(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus build folder"),
    out: Path = typer.Option(None, "--out", help="Report folder (default: CORPUS/report)"),
) -> None:
    """Write the markdown report and the zone-size plot.

    Example: stoicheia corpus report --corpus corpus
    """
    from ..corpus.report import write_report

    _run(lambda: str(write_report(corpus, out or corpus / "report")))
