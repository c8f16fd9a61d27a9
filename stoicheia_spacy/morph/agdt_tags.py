"""The 9-position AGDT morphological tag (``postag``) as the released tagger predicts it.

A tag is nine characters, one per position: part of speech, person, number, tense,
mood, voice, gender, case, degree; ``-`` means "not applicable". The class inventories
below have the sizes of the released ``tagger.xpos_heads.{0..8}`` (14, 4, 4, 8, 8, 5, 5,
6, 3, each including ``-``), taken from AGDT 2.1 ``TAGSETS.xml``:

- pos: ``l`` article, ``n`` noun, ``a`` adjective, ``p`` pronoun, ``v`` verb, ``d``
  adverb, ``r`` adposition, ``c`` conjunction, ``m`` numeral, ``i`` interjection, ``g``
  particle, ``u`` punctuation, ``x`` irregular/unknown (used by AGDT and Gorman).
- mood adds ``g`` (gerundive, the verbal adjective in -τέος, used by Pedalion).

Repairs made by :func:`normalise_tag` (each one counted, never silent):

- ``_`` (Pedalion/Gorman "unset") becomes ``-``; a 10-character tag whose extra
  characters are ``-`` is cut to 9; a shorter tag is padded with ``-``.
- pos ``b`` (Pedalion: coordinating conjunction καί, δέ, τε...) becomes ``c``;
  pos ``e`` (AGDT 1.6 Homer: exclamation ὦ, πόποι) becomes ``i`` (interjection, as in 2.x).
- AGDT 1.6 participles: the 1.6 guidelines allow pos ``t`` (participle); it becomes
  ``v`` with mood ``p``. The mirrored 1.6 Homer files already write ``v...p...``, so
  this rule is there for other 1.6 exports.
- degree ``p`` (Gorman/Pedalion "positive") becomes ``-`` (positive is unmarked in 2.x).
- any other character outside a position's inventory becomes ``-`` and the tag is
  reported as malformed (:class:`TagStats`).

``tags_to_ids`` converts many tags at once with lookup tables (no loop over characters).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidTagError

POSITION_NAMES: tuple[str, ...] = (
    "pos",
    "person",
    "number",
    "tense",
    "mood",
    "voice",
    "gender",
    "case",
    "degree",
)
TAG_LENGTH = 9
EMPTY_TAG = "-" * TAG_LENGTH

#: Class inventory of each position, ``-`` first (its class id is the index in the string).
XPOS_ALPHABETS: tuple[str, ...] = (
    "-lnapvdrcmigux",  # pos
    "-123",  # person
    "-spd",  # number: singular, plural, dual
    "-pirltfa",  # tense: present, imperfect, perfect, pluperfect, future perfect, future, aorist
    "-isnmpog",  # mood: indicative, subjunctive, infinitive, imperative, participle, optative, gerundive
    "-apme",  # voice: active, passive, middle, medio-passive
    "-mfnc",  # gender: masculine, feminine, neuter, common
    "-ngdav",  # case: nominative, genitive, dative, accusative, vocative
    "-cs",  # degree: comparative, superlative
)
#: Head sizes of the released tagger (checked against the inventories at import).
N_CLASSES: tuple[int, ...] = (14, 4, 4, 8, 8, 5, 5, 6, 3)
assert tuple(len(a) for a in XPOS_ALPHABETS) == N_CLASSES

_POS_REWRITE = {"b": "c", "e": "i"}

# (TAG_LENGTH, 256) table: byte -> class id, -1 where the byte is not in the inventory.
_LOOKUP = np.full((TAG_LENGTH, 256), -1, dtype=np.int16)
for _i, _alpha in enumerate(XPOS_ALPHABETS):
    for _j, _ch in enumerate(_alpha):
        _LOOKUP[_i, ord(_ch)] = _j


@dataclass
class TagStats:
    """Counts of tag repairs: ``repairs[kind]`` and examples of malformed raw tags."""

    total: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    malformed: Counter[str] = field(default_factory=Counter)

    def merge(self, other: TagStats) -> None:
        """Add ``other``'s counts to this one."""
        self.total += other.total
        self.repairs.update(other.repairs)
        self.malformed.update(other.malformed)


def split_tag(tag: str) -> tuple[str, ...]:
    """The nine position values of a valid tag (raises :class:`InvalidTagError`)."""
    if not is_valid_tag(tag):
        raise InvalidTagError(f"not a valid 9-position AGDT tag: {tag!r}")
    return tuple(tag)


def join_tag(parts: Sequence[str]) -> str:
    """Join nine position values into a tag (raises :class:`InvalidTagError`)."""
    tag = "".join(parts)
    if len(parts) != TAG_LENGTH or not is_valid_tag(tag):
        raise InvalidTagError(f"not a valid 9-position AGDT tag: {list(parts)!r}")
    return tag


def is_valid_tag(tag: object) -> bool:
    """Whether ``tag`` is a 9-character string with every position in its inventory."""
    if not isinstance(tag, str) or len(tag) != TAG_LENGTH:
        return False
    return all(ch in alpha for ch, alpha in zip(tag, XPOS_ALPHABETS, strict=True))


def normalise_tag(raw: str | None, stats: TagStats | None = None) -> str:
    """Repair a raw AGDT/Gorman/Pedalion/1.6 tag into the 2.x inventory (module docstring).

    A missing or empty tag becomes ``---------`` (counted as ``empty``). Never raises.
    """
    if stats is not None:
        stats.total += 1
    if raw is None or raw.strip() in ("", "_", '""'):
        if stats is not None:
            stats.repairs["empty"] += 1
        return EMPTY_TAG
    tag = raw.strip().replace("_", "-")
    if tag != raw.strip() and stats is not None:
        stats.repairs["underscore"] += 1
    if len(tag) > TAG_LENGTH:
        if set(tag[TAG_LENGTH:]) <= {"-"}:
            tag = tag[:TAG_LENGTH]
            if stats is not None:
                stats.repairs["too_long"] += 1
        else:
            if stats is not None:
                stats.malformed[raw] += 1
            tag = tag[:TAG_LENGTH]
    elif len(tag) < TAG_LENGTH:
        tag = tag.ljust(TAG_LENGTH, "-")
        if stats is not None:
            stats.repairs["too_short"] += 1
    chars = list(tag)
    if chars[0] in _POS_REWRITE:
        if stats is not None:
            stats.repairs[f"pos_{chars[0]}"] += 1
        chars[0] = _POS_REWRITE[chars[0]]
    elif chars[0] == "t":
        chars[0], chars[4] = "v", "p"
        if stats is not None:
            stats.repairs["pos_t_participle"] += 1
    if chars[8] == "p":
        chars[8] = "-"
        if stats is not None:
            stats.repairs["degree_positive"] += 1
    bad = False
    for i, alpha in enumerate(XPOS_ALPHABETS):
        if chars[i] not in alpha:
            chars[i] = "-"
            bad = True
    if bad and stats is not None:
        stats.malformed[raw] += 1
    return "".join(chars)


def tags_to_ids(tags: Iterable[str]) -> np.ndarray:
    """Class ids (N, 9) int16 of valid tags, vectorised; raises :class:`InvalidTagError`."""
    tag_list = list(tags)
    if not tag_list:
        return np.zeros((0, TAG_LENGTH), dtype=np.int16)
    try:
        buf = "".join(tag_list).encode("ascii")
    except UnicodeEncodeError as exc:
        raise InvalidTagError("tags must be ASCII AGDT tags") from exc
    if len(buf) != TAG_LENGTH * len(tag_list) or any(len(t) != TAG_LENGTH for t in tag_list):
        raise InvalidTagError("every tag must have exactly 9 positions")
    codes = np.frombuffer(buf, dtype=np.uint8).reshape(-1, TAG_LENGTH)
    ids = _LOOKUP[np.arange(TAG_LENGTH)[None, :], codes]
    if (ids < 0).any():
        row = int(np.argwhere(ids < 0)[0, 0])
        raise InvalidTagError(f"tag {tag_list[row]!r} has a value outside the inventory")
    return ids


def ids_to_tags(ids: np.ndarray) -> list[str]:
    """Inverse of :func:`tags_to_ids`."""
    arr = np.asarray(ids)
    if arr.ndim != 2 or arr.shape[1] != TAG_LENGTH:
        raise InvalidTagError(f"expected an (N, 9) id array, got shape {arr.shape}")
    n_classes = np.asarray(N_CLASSES)
    if (arr < 0).any() or (arr >= n_classes[None, :]).any():
        raise InvalidTagError("class id out of range")
    table = [np.frombuffer(a.encode("ascii"), dtype=np.uint8) for a in XPOS_ALPHABETS]
    codes = np.stack([table[i][arr[:, i]] for i in range(TAG_LENGTH)], axis=1)
    flat = codes.astype(np.uint8).tobytes().decode("ascii")
    return [flat[i : i + TAG_LENGTH] for i in range(0, len(flat), TAG_LENGTH)]
