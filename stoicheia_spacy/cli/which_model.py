"""``stoicheia which-model PASSAGE``: did the shipped model read it, which fold never did?"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import typer

from .options import chosen_format, format_option, json_option, printer, read_text, require_greek


class WhichFormat(StrEnum):
    """What ``stoicheia which-model`` writes."""

    text = "text"
    json = "json"


def which_model_command(
    passage: str = typer.Argument(..., metavar="TEXT_OR_FILE",
                                  help="Greek passage (five words or more), or a UTF-8 file of it"),
    index: Path = typer.Option(None, "--index", help="Model index (default: the shipped model's)"),
    zones: Path = typer.Option(None, "--zones", help="Zone index of our folds (default: shipped, when present)"),
    manifests: Path = typer.Option(None, "--manifests", help="Fold manifests: ours (fold_k.json) or published (fold_k*.tsv.gz)"),
    work: str = typer.Option(None, "--work", help="The passage's work key, to ask --manifests"),
    fmt: WhichFormat = format_option(WhichFormat.text, "text|json", "text: for people; json: the answer as one object"),
    as_json: bool = json_option(),
) -> None:
    """Say whether the model read any word 5-gram of PASSAGE and which folds never read it.

    Example: stoicheia which-model "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην"
    """
    from ..provenance import which_model

    want_json = chosen_format(fmt, as_json) == "json"
    text = read_text(passage)
    require_greek([text])
    msg = printer()
    answer = which_model(text, index=index, zones=zones, manifests=manifests, work=work)
    if want_json:
        typer.echo(json.dumps(answer.to_dict(), ensure_ascii=False, indent=1))
        return
    for note in answer.notes:
        msg.warn(note)
    if answer.model is not None:
        m = answer.model
        name = m["model"] or "the model"
        if m["read"]:
            msg.warn(f"{name} read {len(m['overlapping'])} of the {m['checked']} word 5-grams of this passage "
                     f"(each may be a false positive with probability {m['fp_rate']:.3f}):")
            for gram in m["overlapping"]:
                typer.echo(f"  {gram}")
        elif m["checked"]:
            msg.good(f"{name} never read any of the {m['checked']} word 5-grams of this passage")
    if answer.folds is not None:
        held = answer.folds["never_read"]
        if held:
            msg.info(f"Our ten folds (zone index, false-positive rate {answer.folds['fp_rate']:.2g} per "
                     f"5-gram and zone; a fold is said to have never read the passage when p false <= "
                     f"{answer.folds['max_p_false']:g}):")
            for f in held:
                typer.echo(f"  {_fold_line(f, answer.folds['fp_rate'])}")
        else:
            msg.info("no held-out zone of our folds holds this passage")
    if answer.manifests is not None:
        held = answer.manifests["never_read"]
        folds = ", ".join(f"fold {f['fold']} ({f['held_out_as']})" for f in held) or "none"
        msg.info(f"{answer.manifests['work']} is held out by: {folds} (exact: from work keys, no false positive)")


def _fold_line(f: dict[str, Any], fp_rate: float) -> str:
    """One fold's row: a firm claim only when its hits are unlikely to be false positives."""
    head = f"fold {f['fold']}: "
    where = f"held out as {f['as']}"
    if f["claim"] == "never read":
        return head + f"never read ({where}; p false = {f['p_false']:.2g})"
    if f["claim"] == "possibly never read":
        return head + (f"possibly never read (p false = {f['p_false']:.2g}, index false-positive rate "
                       f"{fp_rate:.2g}; give a longer passage)")
    return head + (f"partly held out: {f['held_out_ngrams']}/{f['of']} of its 5-grams ({where}); "
                   "its training may hold the rest")
