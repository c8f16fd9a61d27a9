"""Harmonise the four treebanks, split them (5 folds + shared test) and write DocBins
(data-prep step ``convert``): ``corpus/fold{k}/train.spacy``, ``corpus/fold{k}/dev.spacy``,
``corpus/test.spacy``, ``corpus/ud_perseus_{dev,test}.spacy`` (UD annotation),
``corpus/ud_perseus_{dev,test}_agdt.spacy`` (the same sentences in their harmonised AGDT 2.1
annotation, the training folds' convention) and ``corpus/stats.json``.

``convert.py --ud-agdt ASSETS CORPUS`` (step ``ud-agdt``) writes only the two ``_agdt`` files,
reading just the AGDT 2.1 documents UD Perseus comes from, and updates ``stats.json``.

``convert.py --held-out MIRROR CORPUS`` (step ``held-out``) writes ``corpus/papygreek_reg.spacy``:
the PapyGreek documentary treebank (regularised layer), which no fold trains on, as a held-out
test. Leiden marks are taken out of its forms (brackets of every kind, the underdot of an
uncertain letter, interlinear and erasure marks; letters in braces, which the editors call
superfluous, go with them), and only sentences annotated throughout are kept: every word with a
head, every word but punctuation with a tag, no gap marker (``[_.?]``) among the words. A sentence
whose text is also in the converted corpus (folds, shared test; e.g. a papyrus Pedalion treebanked
too, or a letter formula) is left out, so that no arm is scored on a sentence it trained on.
The same step splits it by document for fitting decoding weights on documentary text (issue 42):
``papygreek_reg_dev.spacy`` holds the documents whose id ends in a digit of :data:`HELD_OUT_DEV_DIGITS`
(the papyri's split rule, as ``projects/restore``: the last digit of the document's id; about a fifth),
``papygreek_reg_test.spacy`` the others, the held-out test from then on."""

from __future__ import annotations

import json
import re
import sys
import time
import unicodedata
from dataclasses import replace
from pathlib import Path

from spacy.tokens import DocBin
from spacy.vocab import Vocab
from stoicheia_lab.treebanks.harmonise import HarmoniseStats, Sentence, harmonise
from stoicheia_lab.treebanks.readers import SOURCES, RawSentence, iter_conllu, iter_source
from stoicheia_lab.treebanks.splits import make_splits, sentence_key
from stoicheia_lab.treebanks.to_docbin import sentences_to_docbin
from stoicheia_lab.treebanks.ud_match import match_ud_from_source, match_ud_to_agdt

from stoicheia_spacy.morph.agdt_tags import normalise_tag
from stoicheia_spacy.morph.lemma_scripts import build_script_vocab

UD = "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-{}.conllu.xz"
HELD_OUT_FILE = "papygreek_reg.spacy"
#: PapyGreek documents whose id's last digit is one of these form its dev part (the rest its test part)
HELD_OUT_DEV_DIGITS = frozenset("01")
# Leiden+ / papyrological marks around or on letters (the letters stay): lost, restored,
# abbreviation, added, erased, interlinear, uncertain, ...; braces' content is superfluous text
LEIDEN_MARKS = str.maketrans("", "", "[]⟦⟧〚〛()<>|/\\⧙⧘¯*^❛❜↕⸍‧?¨\u0323")
SUPERFLUOUS = re.compile(r"\{[^{}]*\}")
UD_AGDT = "ud_perseus_{}_agdt.spacy"


def read_ud(assets_dir: Path) -> dict[str, list[RawSentence]]:
    """UD Perseus dev and test sentences."""
    return {
        split: list(iter_conllu(assets_dir / UD.format(split), source="ud_perseus"))
        for split in ("dev", "test")
    }


def write_ud_agdt(
    ud: dict[str, list[RawSentence]],
    out: Path,
    *,
    agdt: list[Sentence] | None = None,
    assets_dir: Path | None = None,
    vocab: Vocab | None = None,
) -> dict[str, dict[str, int]]:
    """Write ``ud_perseus_{split}_agdt.spacy``: the UD sentences in their harmonised AGDT 2.1
    annotation, matched among ``agdt`` (harmonised AGDT 2.1 sentences) or, without it, read
    from the AGDT documents under ``assets_dir``; return the match counts per split."""
    counts = {}
    for split, rows in ud.items():
        if agdt is not None:
            match = match_ud_to_agdt(rows, agdt)
        elif assets_dir is not None:
            match = match_ud_from_source(assets_dir, rows)
        else:
            raise ValueError("write_ud_agdt needs agdt sentences or assets_dir")
        sentences_to_docbin(match.sentences, vocab=vocab).to_disk(out / UD_AGDT.format(split))
        counts[split] = match.counts()
        print(f"UD Perseus {split} in AGDT 2.1 annotation:", counts[split], flush=True)
    return counts


def ud_agdt_only(assets: str, corpus: str) -> int:
    """Step ``ud-agdt``: only the ``_agdt`` DocBins, their counts merged into ``stats.json``."""
    assets_dir, out = Path(assets), Path(corpus)
    out.mkdir(parents=True, exist_ok=True)
    counts = write_ud_agdt(read_ud(assets_dir), out, assets_dir=assets_dir)
    path = out / "stats.json"
    stats = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    stats["ud_perseus_agdt"] = counts
    path.write_text(json.dumps(stats, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


def held_out_sentence(raw: RawSentence) -> RawSentence | None:
    """``raw`` with Leiden marks out of its forms, or None unless it is annotated throughout."""
    forms = [unicodedata.normalize("NFC", SUPERFLUOUS.sub("", f).translate(LEIDEN_MARKS)) for f in raw.forms]
    for form, tag, head, artificial in zip(forms, raw.tags, raw.heads, raw.artificial, strict=True):
        if artificial:
            continue
        punct = bool(form) and all(unicodedata.category(c).startswith("P") for c in form)
        if head < 0 or not form or "_" in form or not (tag or punct):
            return None
    return replace(raw, forms=forms)


def corpus_keys(corpus: Path) -> set[str]:
    """:func:`sentence_key` of every sentence in the converted corpus (none if unbuilt): the
    shared test and UD files, and fold 0's train + dev, which together hold every fold's part."""
    vocab = Vocab()
    paths = [*sorted(corpus.glob("*.spacy")), *sorted(corpus.glob("fold0/*.spacy"))]
    return {sentence_key([t.text for t in sent]) for path in paths if path.name != HELD_OUT_FILE
            for doc in DocBin().from_disk(path).get_docs(vocab) for sent in doc.sents}


def held_out_part(doc_id: str) -> str:
    """``dev`` or ``test``: the held-out part of a PapyGreek document (:data:`HELD_OUT_DEV_DIGITS`)."""
    digits = [c for c in doc_id if c.isdigit()]
    return "dev" if digits and digits[-1] in HELD_OUT_DEV_DIGITS else "test"


def held_out(mirror: str, corpus: str) -> int:
    """Step ``held-out``: the held-out treebanks' DocBins, their counts merged into ``stats.json``."""
    out = Path(corpus)
    out.mkdir(parents=True, exist_ok=True)
    st = HarmoniseStats()
    raws = list(iter_source(mirror, "papygreek"))
    kept = [c for r in raws if (c := held_out_sentence(r)) is not None]
    seen = corpus_keys(out)
    fresh = [r for r in kept if sentence_key(r.forms) not in seen]
    sents = [h for r in fresh if (h := harmonise(r, stats=st)) is not None]
    sentences_to_docbin(sents).to_disk(out / HELD_OUT_FILE)
    parts = {"dev": [s for s in sents if held_out_part(s.doc_id) == "dev"],
             "test": [s for s in sents if held_out_part(s.doc_id) == "test"]}
    for part, chosen in parts.items():
        sentences_to_docbin(chosen).to_disk(out / HELD_OUT_FILE.replace(".spacy", f"_{part}.spacy"))
    counts = {"sentences_read": len(raws), "annotated_throughout": len(kept),
              "also_in_corpus": len(kept) - len(fresh), "sentences": len(sents), "words": st.words_out,
              "documents": len({s.doc_id for s in sents}), "events": dict(st.events),
              "parts": {part: {"sentences": len(chosen), "words": sum(len(s.forms) for s in chosen),
                               "documents": len({s.doc_id for s in chosen})} for part, chosen in parts.items()},
              "dev_rule": f"last digit of the document id in {sorted(HELD_OUT_DEV_DIGITS)}"}
    path = out / "stats.json"
    stats = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    stats["papygreek_reg"] = counts
    path.write_text(json.dumps(stats, ensure_ascii=False, indent=1), encoding="utf-8")
    print("PapyGreek (reg layer), held out:", counts, flush=True)
    return 0


def _ud_sentence(raw: RawSentence) -> Sentence:
    """A UD sentence as is (UD relations and heads, UD lemmas), XPOS repaired as an AGDT tag."""
    tags = [normalise_tag(t) for t in raw.tags]
    return Sentence(
        raw.source,
        raw.doc_id,
        raw.sent_id,
        raw.work_id,
        list(raw.forms),
        list(raw.lemmas),
        tags,
        list(raw.relations),
        list(raw.heads),
    )


def main(assets: str, corpus: str, seed: str = "0", n_folds: str = "5") -> int:
    assets_dir, out = Path(assets), Path(corpus)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    stats: dict[str, object] = {}
    sentences: list[Sentence] = []
    for name in SOURCES:
        st = HarmoniseStats()
        sents = [
            h for r in iter_source(assets_dir, name) if (h := harmonise(r, stats=st)) is not None
        ]
        sentences.extend(sents)
        stats[name] = {
            "sentences": len(sents),
            "words": st.words_out,
            "events": dict(st.events),
            "tag_repairs": dict(st.tags.repairs),
            "malformed_tags": sum(st.tags.malformed.values()),
        }
        print(name, stats[name], flush=True)
    ud = read_ud(assets_dir)
    ud_keys = {sentence_key(s.forms) for rows in ud.values() for s in rows}
    split = make_splits(sentences, n_folds=int(n_folds), seed=int(seed), exclude_keys=ud_keys)
    vocab = Vocab()
    parts = [sentences_to_docbin(p, vocab=vocab) for p in split.parts]
    sentences_to_docbin(split.test, vocab=vocab).to_disk(out / "test.spacy")
    for k in range(len(parts)):
        fold_dir = out / f"fold{k}"
        fold_dir.mkdir(exist_ok=True)
        train = DocBin(
            attrs=["ORTH", "SPACY", "TAG", "POS", "MORPH", "LEMMA", "HEAD", "DEP", "SENT_START"]
        )
        for j, part in enumerate(parts):
            if j != k:
                train.merge(part)
        train.to_disk(fold_dir / "train.spacy")
        parts[k].to_disk(fold_dir / "dev.spacy")
    for name, rows in ud.items():
        sentences_to_docbin([_ud_sentence(r) for r in rows], vocab=vocab).to_disk(
            out / f"ud_perseus_{name}.spacy"
        )
    stats["ud_perseus_agdt"] = write_ud_agdt(
        ud, out, agdt=[s for s in sentences if s.source == "agdt"], vocab=vocab
    )
    scripts = build_script_vocab(
        (f, lem) for s in sentences for f, lem in zip(s.forms, s.lemmas, strict=True)
    )
    stats["split"] = {
        "seed": int(seed),
        "test_sentences": len(split.test),
        "test_words": sum(len(s) for s in split.test),
        "part_words": [sum(len(s) for s in p) for p in split.parts],
        "dropped": dict(split.dropped),
        "units": {u: k for u, k in sorted(split.part_of_unit.items())},
    }
    stats["lemma_scripts"] = len(scripts)
    # merged into the committed file: the counts of the other steps (held-out, ud-agdt) stay, and
    # nothing that changes from run to run is written, so a rebuild leaves the checkout clean
    path = out / "stats.json"
    kept = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    kept.pop("seconds", None)
    path.write_text(json.dumps({**kept, **stats}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in stats.items() if k != "split"}, ensure_ascii=False)[:2000],
          f"({time.time() - start:.1f} s)")
    print("split", {k: v for k, v in stats["split"].items() if k != "units"})  # type: ignore[union-attr]
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ud-agdt"]:
        sys.exit(ud_agdt_only(*sys.argv[2:4]))
    if sys.argv[1:2] == ["--held-out"]:
        sys.exit(held_out(*sys.argv[2:4]))
    sys.exit(main(*sys.argv[1:5]))
