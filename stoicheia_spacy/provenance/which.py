"""``which_model(text)``: did the shipped model read this passage, and which fold never did?"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..assets import DEFAULT_MODEL, assets_dirs
from ..errors import StoicheiaError
from ..textcheck import validate_text
from .bloom import BloomFilter
from .index import N_ZONES, zone_keys
from .manifests import never_read, read_manifests
from .ngrams import N, passage_ngrams

#: File name of a model's index inside its model folder (where the model package ships it).
MODEL_INDEX = "which_model.npz"
#: Zone index of our ten folds (``assets/which_model/folds.npz``).
ZONE_INDEX = "folds.npz"
#: A fold is said to have "never read" a passage only when its hits are this unlikely by chance.
MAX_P_FALSE = 0.01
_CLAIMS = ("never read", "possibly never read", "partly held out")


def default_model_index() -> Path | None:
    """The shipped model's index: inside the model folder, else ``assets/which_model/``."""
    for root in assets_dirs():
        for path in (root / "models" / DEFAULT_MODEL / MODEL_INDEX, root / "which_model" / f"{DEFAULT_MODEL}.npz"):
            if path.is_file():
                return path
    return None


def default_zone_index() -> Path | None:
    """The zone index of our folds, when shipped."""
    for root in assets_dirs():
        if (root / "which_model" / ZONE_INDEX).is_file():
            return root / "which_model" / ZONE_INDEX
    return None


@dataclass
class Answer:
    """What is known about a passage (``to_dict`` for JSON)."""

    passage: str
    ngrams: list[str]
    model: dict[str, Any] | None = None
    folds: dict[str, Any] | None = None
    manifests: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def which_model(text: str, *, index: str | Path | None = None, zones: str | Path | None = None,
                manifests: str | Path | None = None, work: str | None = None, n: int = N) -> Answer:
    """Whether the shipped model (or the one ``index`` describes) read any word ``n``-gram of
    ``text`` (Bloom filter: a reported n-gram may be a false positive, at the stated rate; an
    unreported one was certainly not in the training text), which of our ten folds never read
    it (``zones``), and, given the ``work`` key, which folds of a manifest set held it out."""
    validate_text(text)
    grams, keys = passage_ngrams(text, n)
    answer = Answer(passage=text, ngrams=grams)
    if not grams:
        answer.notes.append(f"the passage has fewer than {n} Greek words: no {n}-gram to look up")
    index_path = Path(index) if index else default_model_index()
    if index_path is not None:
        bloom = BloomFilter.load(index_path)
        _check_n(bloom, n, index_path)
        hits = bloom.contains(keys)
        answer.model = {"model": bloom.meta.get("model"), "index": str(index_path),
                        "read": bool(hits.any()), "overlapping": [g for g, h in zip(grams, hits, strict=True) if h],
                        "checked": len(grams), "fp_rate": bloom.fp_rate,
                        "expected_false_hits": round(bloom.fp_rate * len(grams), 4)}
    else:
        answer.notes.append("no model index found (build one with python -m stoicheia_spacy.provenance build)")
    zone_path = Path(zones) if zones else default_zone_index()
    if zone_path is not None and grams:
        answer.folds = fold_answer(BloomFilter.load(zone_path), keys, grams, n, zone_path)
    elif zone_path is None:
        answer.notes.append("no zone index of our folds (python -m stoicheia_spacy.provenance zones "
                            "--corpus-dir projects/corpus/corpus --out assets/which_model/folds.npz)")
    if manifests is not None:
        if not work:
            raise StoicheiaError("asking fold manifests needs the passage's work key (e.g. --work tlg0012.tlg001)")
        held = never_read(read_manifests(Path(manifests)), work)
        answer.manifests = {"manifests": str(manifests), "work": work,
                            "never_read": [{"fold": k, "held_out_as": split} for k, split in held.items()]}
    return answer


def _check_n(bloom: BloomFilter, n: int, path: Path) -> None:
    if int(bloom.meta.get("n", N)) != n:
        raise StoicheiaError(f"{path} indexes {bloom.meta.get('n')}-grams, not {n}-grams")


def fold_answer(bloom: BloomFilter, keys: Any, grams: list[str], n: int, path: Path) -> dict[str, Any]:
    """Per zone, the passage's n-grams in its held-out text; fold ``k`` never read those of
    zones ``k`` (its test set) and ``k + 1`` (its dev set): ``verify`` proved its training
    text shares no 5-gram with them.

    Fold ``k`` is claimed to have never read the passage only when every n-gram hits zone ``k``
    or ``k + 1``. A hit may be a false positive (rate ``fp``), so each fold carries ``p_false``,
    the probability that its hits all arose by chance: ``fp ** h``, ``h`` counting one per
    (n-gram, zone) hit. The claim is ``never read`` when ``p_false <= MAX_P_FALSE``, else
    ``possibly never read`` (a longer passage has more n-grams and lowers it); a fold that holds
    out only some n-grams is ``partly held out`` (no claim on the passage)."""
    _check_n(bloom, n, path)
    fp = bloom.fp_rate
    in_zone = {z: bloom.contains(zone_keys(keys, z)) for z in range(N_ZONES)}
    zones = {z: [g for g, h in zip(grams, hit, strict=True) if h] for z, hit in in_zone.items() if hit.any()}
    folds: list[dict[str, Any]] = []
    for k in range(N_ZONES):
        test, dev = in_zone[k], in_zone[(k + 1) % N_ZONES]
        held = test | dev
        if held.any():
            p_false = float(fp ** int(test.sum() + dev.sum()))
            claim = ("partly held out" if not held.all()
                     else "never read" if p_false <= MAX_P_FALSE else "possibly never read")
            folds.append({"fold": k, "held_out_ngrams": int(held.sum()), "of": len(grams),
                          "all": bool(held.all()), "as": "test" if test.any() else "dev",
                          "p_false": p_false, "claim": claim})
    folds.sort(key=lambda f: (_CLAIMS.index(f["claim"]), f["p_false"], -f["held_out_ngrams"], f["fold"]))
    return {"index": str(path), "zones": {str(z): g for z, g in zones.items()}, "never_read": folds,
            "fp_rate": fp, "max_p_false": MAX_P_FALSE}
