"""``stoicheia demo``: codec planes and Leiden gaps of a shipped passage, then any installed pipeline."""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import torch
import typer
from wasabi import Printer

from .. import alphabet as A
from ..assembly import DEFAULT_SOURCE, load_pipeline
from ..backbone import planes_to_tensors
from ..codec import encode_planes
from ..encoder.model import torch_backbone
from ..leiden import parse_gaps
from .options import deprecated_model, model_option, printer, source_option
from .package import package_name, package_pipeline
from .scan import format_doc

#: The shipped sample (the repository's ``assets/samples``); used when it is present.
SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "samples" / "bgu_1_100.txt"
#: Fallback when the package is installed without the repository assets (same text, BGU I 100).
FALLBACK = ("Κόμων Μουσαίου τοῦ Ἡρακλείτου Πεκύσι Ὥρου χαίρειν. ὁμολογῶ πεπρακέναι σοι "
            "κάμηλον θήλειαν δευτερόβολον πυρρὰν κεχαραγμένο[ν] δεξιῷ σιαγόνι.")
_RESTORED = re.compile(r"\[([^\]\[.\-–0-9]+)\]")


def read_sample(path: Path | None = None) -> str:
    """The sample passage without its ``#`` comment lines."""
    path = path or SAMPLE
    if not path.is_file():
        return FALLBACK
    lines = path.read_text(encoding="utf-8").splitlines()
    return " ".join(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def mask_restorations(text: str) -> str:
    """Turn editorial restorations ``[αβγ]`` into lacunae of the same width ``[.3]``."""
    return _RESTORED.sub(lambda m: f"[.{len(m.group(1))}]", text)


def installed_pipelines() -> list[str]:
    """Names of the installed ``grc_stoicheia_*`` pipeline packages."""
    names = {re.sub(r"[-_.]+", "_", d.metadata["Name"] or "").lower() for d in metadata.distributions()}
    return sorted(n for n in names if n.startswith("grc_stoicheia_"))


def _build_and_install(source: str, msg: Printer, lexicon: bool = True) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        msg.info(f"Building grc_stoicheia_doc_clean from {source}")
        if not lexicon:
            msg.warn("--no-lexicon: built without the lexicon data package stoicheia-lexicon-grc "
                     "(lower accent and macron accuracy; `make lexicon` builds it from the data mirror)")
        path = package_pipeline(source, "doc_clean", Path(tmp), force=True, lexicon=lexicon)
        sdist = next((path / "dist").glob("*.tar.gz"))
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", str(sdist)], check=True)
    return package_name("doc_clean")


def demo_command(
    text_file: Path = typer.Option(None, "--text-file", metavar="FILE", help="Passage to show (default: the shipped sample)"),
    model: str = model_option(),
    build: bool = typer.Option(False, "--build", metavar="",
                               help="(Re)build and install grc_stoicheia_doc_clean from --model (default: the "
                                    "embedded model) first, then run it"),
    letters: int = typer.Option(12, "--letters", metavar="N", help="How many letters of the planes to print"),
    lexicon: bool = typer.Option(True, "--lexicon/--no-lexicon",
                                 help="--build with the lexicon data package (--no-lexicon: without it, said aloud)"),
    source: str = source_option(),
) -> None:
    """Show the codec planes and Leiden gaps of a passage, then run a pipeline on it
    (--model, else every installed grc_stoicheia_* package).

    Example: stoicheia demo --build
    """
    msg = printer()
    chosen = deprecated_model(model, source)
    text = read_sample(text_file)
    msg.divider("Passage")
    print(text)
    planes = encode_planes(text)
    msg.divider(f"Codec planes ({len(planes)} letters; first {letters})")
    rows = [(text[int(o)], int(planes.letters[i]), int(planes.boundary[i]), int(planes.diacritics[i]),
             int(planes.punctuation[i]), int(planes.capitals[i]))
            for i, o in enumerate(planes.offsets[:letters])]
    msg.table(rows, header=("char", "letter", "boundary", "diacritic", "punct", "cap"), divider=True)
    masked = mask_restorations(text)
    gapped = parse_gaps(masked)
    msg.divider(f"Leiden gaps (restorations masked): {len(gapped.gaps)}")
    for gap in gapped.gaps:
        context = gapped.text[max(0, gap.start - 12): gap.start]
        print(f"  …{context}[{gap.kind}, width {gap.min_width}–{gap.max_width}]  (source {gap.source_start}:{gap.source_end})")
    names = [chosen] if chosen and not build else installed_pipelines()
    if build:  # e.g. LexiconMissingError: one error line naming the package and `make demo`
        names = [_build_and_install(chosen or DEFAULT_SOURCE, msg, lexicon)]
    if not names:
        msg.info("No grc_stoicheia_* pipeline installed: run `stoicheia package SOURCE --name NAME` "
                 "and pip install the result, or `stoicheia demo --build`.")
        return
    msg.divider(f"Pipeline {names[0]}")
    nlp = load_pipeline(names[0])
    doc = nlp(gapped.text)
    data = doc._.stoicheia
    msg.good(f"pipes {nlp.pipe_names}: {len(doc)} tokens, {data.n_letters} letters")
    if data.hidden is not None:
        print(f"  hidden states (layers, letters, width): {tuple(data.hidden.shape)}")
    show_masked_letters(nlp, gapped.text, msg)
    show_components(nlp, masked, msg)


#: A hexameter for the scanner (Odyssey 1.1) and a clause to accentuate (Plato, Apology 17a).
VERSE = "ἄνδρα μοι ἔννεπε, μοῦσα, πολύτροπον, ὃς μάλα πολλὰ"
BARE = "οτι μεν υμεις ω ανδρες αθηναιοι πεπονθατε υπο των εμων κατηγορων ουκ οιδα"


def show_components(nlp: Any, masked: str, msg: Printer) -> None:
    """Print what each task component of the pipeline makes of the demo passages."""
    pipes = set(nlp.pipe_names)
    passage = nlp(masked) if {"stoicheia_restorer", "stoicheia_dater"} & pipes else None
    verse = nlp(VERSE) if {"stoicheia_morphologizer", "stoicheia_parser", "stoicheia_scanner",
                           "stoicheia_attributor"} & pipes else None
    if passage is not None and "stoicheia_restorer" in pipes:
        msg.divider(f"Restorer: {len(passage._.restorations)} lacunae, top 3 candidates each")
        for item in passage._.restorations:
            top = ", ".join(f"{cand.text} {cand.share:.2f}" for cand in item.candidates[:3])
            print(f"  {passage.text[max(0, item.start - 14): item.start]}[…]  {top}")
        print(f"  restored: {passage._.restored}")
    if "stoicheia_accentuator" in pipes:
        doc = nlp(BARE)
        msg.divider("Accentuator: the source without accents, breathings or capitals")
        print(f"  {BARE}\n  → {doc._.accent_text}")
    if verse is not None and {"stoicheia_morphologizer", "stoicheia_parser"} & pipes:
        msg.divider("Morphosyntax")
        rows = [(t.text, t.tag_, t.pos_, t.lemma_, t.dep_, t.head.text) for t in verse]
        msg.table(rows, header=("token", "AGDT tag", "UPOS", "lemma", "relation", "head"), divider=True)
    if verse is not None and "stoicheia_scanner" in pipes:
        msg.divider("Scanner")
        print(format_doc(verse))
    if passage is not None and "stoicheia_dater" in pipes:
        msg.divider("Dater: the passage")
        print(f"  {passage._.date}")
        print("  (documented: AD 159, year 22 of Antoninus; the dater's PaDoC MAE is in projects/date/RESULTS.md)")
    if verse is not None and "stoicheia_attributor" in pipes:
        msg.divider("Attributor: the hexameter")
        print(f"  genre {verse._.genre}, dialect {verse._.dialect}")
        print("  (Odyssey 1.1: epic, Ionic/Epic; accuracies in projects/date/RESULTS.md)")


def show_masked_letters(nlp: object, text: str, msg: Printer, every: int = 9, top: int = 3) -> None:
    """Hide every ``every``-th letter (and its diacritics) and print the backbone's guesses."""
    planes = encode_planes(text)[:400]
    hidden = planes.copy()
    where = [i for i in range(every // 2, len(planes), every)]
    hidden.letters[where] = A.MASK_ID
    hidden.diacritics[where] = A.DIA_UNKNOWN
    batch = planes_to_tensors([hidden])
    model = torch_backbone(nlp.get_pipe("stoicheia_encoder").model)  # type: ignore[attr-defined]
    with torch.inference_mode():
        out = model(batch["input_ids"], batch["boundary"], batch["dia"], batch["punct"], seg_id=batch["seg_id"])
    probs = torch.softmax(out.char[0, :, : A.N_ALPHA].float(), dim=-1)
    best = probs.topk(top, dim=-1)
    right = 0
    rows = []
    for i in where:
        gold = A.ALPHABET[int(planes.letters[i])]
        guesses = [f"{A.ALPHABET[int(j)]} {float(p):.2f}" for p, j in zip(best.values[i], best.indices[i], strict=True)]
        right += int(int(best.indices[i, 0]) == int(planes.letters[i]))
        context = text[max(0, int(planes.offsets[i]) - 8): int(planes.offsets[i])]
        rows.append((f"…{context}_", gold, ", ".join(guesses)))
    msg.divider(f"Backbone: {len(where)} hidden letters, {right} guessed first time")
    msg.table(rows[:15], header=("context", "gold", f"top {top}"), divider=True)
