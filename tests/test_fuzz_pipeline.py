"""Fuzz the whole pipeline (tokenizer, encoder, restorer, accentuator, morphologizer,
lemmatizer, parser, scanner) on the golden tiny checkpoint with hypothesis: random
Unicode, Greek with stray combining marks, Leiden fragments (malformed brackets,
``[ca. 100000]``, 300 dashes), huge and empty inputs, mixed scripts.

Every call either returns a Doc whose ``text`` is the input or raises a
:class:`stoicheia_spacy.errors.StoicheiaError`; no call takes longer than a generous
per-position budget measured against a baseline sentence in the same test (CPU time,
no absolute wall times).  The positions of a text are its characters plus the hidden
letters the encoder feeds for its gaps (at most ``models.gaps.MAX_GAP_WIDTH`` per gap: fuzzing
found ``[ca. 100000]`` making the restorer allocate 100,000 slots).  Examples are derandomized so the
suite is reproducible.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest
import spacy
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stoicheia_spacy.encoder.gaps import MAX_GAP_WIDTH, UNKNOWN_GAP_WIDTH
from stoicheia_spacy.errors import StoicheiaError
from stoicheia_spacy.leiden import parse_gaps

torch.set_num_threads(1)

TESTS = Path(__file__).resolve().parent
BASELINE = "ἔδοξε τῇ βουλῇ καὶ τῷ δήμῳ· Κεκροπὶς ἐπρυτάνευε, Μνησίθεος ἐγραμμάτευε, Εὐπείθης ἐπεστάτει."
#: Budget of one call: SLACK × (the baseline call's CPU time) × max(1, positions / len(BASELINE)).
#: Generous, because the CPU is shared; a call whose cost grows faster than its input
#: blows through it.
SLACK = 60.0
FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _morph_helpers():
    spec = importlib.util.spec_from_file_location("morph_helpers", TESTS / "morph" / "helpers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def nlp(tiny_checkpoint: Path) -> spacy.Language:
    """The default components on the golden tiny backbone, heads initialised on 12 AGDT sentences."""
    from stoicheia_spacy.assembly import build_pipeline

    helpers = _morph_helpers()
    nlp = build_pipeline(str(tiny_checkpoint), max_length=48, overlap=12)
    nlp.add_pipe("stoicheia_restorer", config={"settings": {"beam_width": 2, "n_candidates": 2}})
    nlp.add_pipe("stoicheia_accentuator")
    for name in ("stoicheia_morphologizer", "stoicheia_lemmatizer", "stoicheia_parser", "stoicheia_scanner"):
        nlp.add_pipe(name)
    examples = helpers.examples(nlp)
    nlp.initialize(lambda: examples)
    return nlp


@pytest.fixture(scope="module")
def per_call_budget(nlp: spacy.Language):
    """seconds allowed for a text: SLACK × baseline × max(1, len / len(BASELINE))."""
    nlp(BASELINE)  # warm-up
    best = min(_timed(nlp, BASELINE)[1] for _ in range(3))

    def budget(text: str) -> float:
        return SLACK * best * max(1.0, positions(text) / len(BASELINE))

    return budget


def positions(text: str) -> int:
    """Characters of ``text`` plus the hidden letters its gaps state."""
    try:
        gaps = parse_gaps(text).gaps
    except StoicheiaError:
        return len(text)
    return len(text) + sum(min(g.max_width or UNKNOWN_GAP_WIDTH, MAX_GAP_WIDTH) for g in gaps)


def _timed(nlp: spacy.Language, text: str) -> tuple[object, float]:
    start = time.process_time()
    try:
        out: object = nlp(text)
    except StoicheiaError as exc:  # the documented errors are allowed
        out = exc
    return out, time.process_time() - start


def check(nlp: spacy.Language, budget, text: str) -> None:
    out, seconds = _timed(nlp, text)
    if not isinstance(out, StoicheiaError):
        assert out.text == text  # type: ignore[attr-defined]
        assert len(out) == 0 or out[-1].idx + len(out[-1].text) <= len(text)  # type: ignore[index]
    assert seconds <= budget(text), f"{seconds:.2f}s for {len(text)} characters: {text[:80]!r}"


# ---- strategies -------------------------------------------------------------------------
GREEK_LETTERS = "αβγδεζηθικλμνξοπρστυφχψωςΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩϲϹϝ"
MARKS = [chr(c) for c in range(0x300, 0x370)] + ["\u0485", "\u1dc0", "\u20d0", "\ufe20"]
LEIDEN = ["[", "]", "[---]", "[.4]", "[....]", "[...]", "[ca. 100000]", "[ca.", "ca. 12]", "[.?]", "[c.5]",
          "[" + "-" * 300 + "]", "-" * 300, "[[", "]]", "⟦", "⟧", "〚", "〛", "(", ")", "<", ">", "{", "}",
          "[ ]", "[.1-2]", "[.3-]", "[vac. 5]", "vac.", "|gap=5|", "‹", "›", "〈", "〉", "[.999999999]"]
SEPARATORS = [" ", "  ", "\n", "\t", ",", ".", "·", ";", "’", "'", "\u0313", " \u0313", "...", "\u00a0", ""]


@st.composite
def greek_with_marks(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        parts.append(draw(st.sampled_from(GREEK_LETTERS)))
        parts.extend(draw(st.lists(st.sampled_from(MARKS), max_size=3)))
        if draw(st.integers(0, 4)) == 0:
            parts.append(draw(st.sampled_from(SEPARATORS)))
    if draw(st.booleans()):  # marks with no letter before them
        parts.insert(0, draw(st.sampled_from(MARKS)))
    return "".join(parts)


@st.composite
def leiden_fragments(draw: st.DrawFn) -> str:
    pieces = st.one_of(st.sampled_from(LEIDEN), st.sampled_from(SEPARATORS),
                       st.text(alphabet=GREEK_LETTERS, min_size=1, max_size=8), greek_with_marks())
    return "".join(draw(st.lists(pieces, max_size=10)))


MIXED = st.lists(st.sampled_from(list("abcXYZ0123456789אבגابتжзи漢字😀\u200d\ufeff\u2028\r")
                                 + list(GREEK_LETTERS) + MARKS[:8] + SEPARATORS), max_size=60).map("".join)


# ---- tests ------------------------------------------------------------------------------
def test_baseline_is_annotated(nlp: spacy.Language) -> None:
    doc = nlp(BASELINE)
    assert doc.text == BASELINE and len(doc) > 10
    assert doc._.accent_text and all(t.tag_ for t in doc if not t.is_punct)


@FUZZ
@given(st.text(max_size=80))
def test_random_unicode(nlp: spacy.Language, per_call_budget, text: str) -> None:
    check(nlp, per_call_budget, text)


@FUZZ
@given(greek_with_marks())
def test_greek_with_stray_marks(nlp: spacy.Language, per_call_budget, text: str) -> None:
    check(nlp, per_call_budget, text)


@FUZZ
@given(leiden_fragments())
def test_leiden_fragments(nlp: spacy.Language, per_call_budget, text: str) -> None:
    check(nlp, per_call_budget, text)


@FUZZ
@given(MIXED)
def test_mixed_scripts(nlp: spacy.Language, per_call_budget, text: str) -> None:
    check(nlp, per_call_budget, text)


@pytest.mark.parametrize("text", [
    "", " ", "\n" * 500, "\u0313", "[", "]", "[ca. 100000]", "ἔδοξε [ca. 100000] τῷ δήμῳ", "-" * 300,
    "[" + "-" * 300 + "]", "[.999999999]", "." * 300, "’" * 50, "\u0301" * 200,
    "α" * 3000, (BASELINE + " ") * 20, "ΕΔΟΞΕΤΗΙΒΟΥΛΗΙ" * 200, "[.4] " * 12,
], ids=lambda t: f"{t[:12]!r}x{len(t)}")
def test_edge_cases(nlp: spacy.Language, per_call_budget, text: str) -> None:
    check(nlp, per_call_budget, text)


def test_restoration_work_is_bounded_per_gap(nlp: spacy.Language, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gap wider than the restorer's max_width comes back too_wide without a beam search."""
    from stoicheia_spacy.restore import beam

    calls = 0
    forward = beam.ModelScorer.__call__

    def counted(self, batch):  # stop early instead of running 101 forwards
        nonlocal calls
        calls += 1
        assert calls <= 30, "more than 30 backbone forwards for one 6-character gap"
        return forward(self, batch)

    monkeypatch.setattr(beam.ModelScorer, "__call__", counted)
    nlp("ἔδοξε [.100] τῷ δήμῳ")


def test_pipe_keeps_every_text(nlp: spacy.Language) -> None:
    texts = ["", BASELINE, "[ἔδοξε]", "ἔδοξε [ca. 100000] τῷ", "\u0313στι", "αβγ" * 50, "[.4] ε"]
    docs = list(nlp.pipe(texts, batch_size=4))
    assert [d.text for d in docs] == texts


def test_malformed_markup_falls_back_to_plain_text(nlp: spacy.Language) -> None:
    """Unbalanced brackets: the encoder reads the text as plain text and stores the parser's
    message (with the offset); the restorer restores nothing and does not raise (documented
    fallback), so ``nlp.pipe`` never stops on markup."""
    text = "λόγος (καὶ ἔργον"
    doc = nlp(text)
    assert doc.text == text and doc._.restorations == [] and doc._.restored == text
    assert "offset 6" in doc._.stoicheia.markup_error and not doc._.stoicheia.gaps
    assert [d._.restorations for d in nlp.pipe([text, "ἔδοξε [.100] τῷ"])][0] == []
