"""Per-source codec statistics (the ``normalize`` step): letters, words, sentences, and the
characters the five-plane codec does not turn into positions, counted by class."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from stoicheia_spacy.textnorm import char_class, sentence_spans, word_keys

from .readers import Record

_CLASS_CACHE: dict[str, str] = {}


def _codec_letter_counter() -> Callable[[str], int] | None:
    """``len(encode_planes(text))`` once the codec exists; None until it lands."""
    try:
        from stoicheia_spacy.codec import encode_planes
    except (ImportError, AttributeError):
        return None
    return lambda text: len(encode_planes(text))


def char_class_counts(text: str) -> Counter[str]:
    """Characters of ``text`` by ``textnorm.char_class`` (counts each distinct char once)."""
    out: Counter[str] = Counter()
    for ch, n in Counter(text).items():
        cls = _CLASS_CACHE.get(ch)
        if cls is None:
            cls = _CLASS_CACHE[ch] = char_class(ch)
        out[cls] += n
    return out


def source_stats(records: Iterable[Record], use_codec: bool = True) -> dict[str, Any]:
    """Statistics of one source's records: records, letters, words, sentences, characters.

    ``letters`` come from the codec (positions of ``encode_planes``) when available and
    ``use_codec`` is set, else from the unicodedata classification (``letter_method`` says which).
    ``stripped`` counts the characters that are not letters by class: space, punct (kept in the
    punctuation plane), mark (combining marks: diacritic plane), digit, latin, greek_other
    (archaic letters, numeral signs), other (brackets, sigla).
    """
    codec = _codec_letter_counter() if use_codec else None
    classes: Counter[str] = Counter()
    n_rec = n_words = n_sents = n_letters = n_chars = 0
    for rec in records:
        text = rec["text"]
        n_rec += 1
        n_chars += len(text)
        n_words += len(word_keys(text))
        n_sents += len(sentence_spans(text))
        counts = char_class_counts(text)
        classes.update(counts)
        n_letters += codec(text) if codec is not None else counts["letter"]
    stripped = {k: v for k, v in sorted(classes.items()) if k != "letter"}
    return {"records": n_rec, "chars": n_chars, "letters": n_letters, "words": n_words,
            "sentences": n_sents, "stripped": stripped,
            "letter_method": "codec" if codec is not None else "unicodedata (temporary)"}
