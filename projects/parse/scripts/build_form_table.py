"""Build the form -> {(lemma, XPOS)} table (issue 42, item 1) that ships in the lexicon data package.

    python scripts/build_form_table.py MIRROR OUT.npz [--train corpus/fold0/train.spacy ...]
        [--no-ddbdp] [--stats OUT_STATS.json]

Sources, each with its licence (recorded in the table and in the stats JSON):

* the treebanks' training fold(s) (``--train``: gold lemma and AGDT tag of every word;
  AGDT / Gorman / Pedalion, CC BY-SA 3.0 US / 4.0);
* the auto-lemmatized DDbDP tokens of the mirror (``papyri/duke_nlp_2018_ddbdp_tokens.tsv.xz``,
  CC BY-SA 4.0, text DDbDP CC BY 3.0): the REGULARIZED form, its lemma and AGDT tag, every
  document whose TM number PapyGreek annotates left out (PapyGreek is a held-out test), tokens
  whose lemma flag is not ``ok``, whose tag is not nine characters, or that are incomplete
  (COMPLETENESS ``I``: a fragment cut by a lacuna, ``]ιος``, whose lemma is a guess) skipped.

Beside the analyses, the table holds LSJ's headwords (``--headwords``, default the mirror's
``lexica/grc_macronizer_db/lsj_word2macron.tsv.xz`` from the grc-macronizer 1.3.0 wheel: its Greek
words, their macron markup dropped): citation forms the lemmatizer may write for a form nothing
attests (``table_lexicon``), no analyses.

The Morpheus-derived Hunspell form list in the mirror has forms only (no lemma, no tag), so it
adds no analysis; ``glem`` / ``ancientgreek`` are registry packages not in the mirror (not used).
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import sys
import tarfile
import time
import unicodedata
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from spacy.tokens import DocBin
from spacy.vocab import Vocab

from stoicheia_spacy.morph.formtable import FormTable

DDBDP = "papyri/duke_nlp_2018_ddbdp_tokens.tsv.xz"
PAPYGREEK = "treebanks/papygreek_treebanks_xml.tar.xz"
LICENCES = {
    "treebank training folds": "AGDT 2.1 / 1.6 CC BY-SA 3.0 US; Gorman CC BY-SA 4.0; Pedalion CC BY-SA 4.0",
    "DDbDP auto-lemmatized tokens (duke-nlp 2018)": "CC BY-SA 4.0 (text: DDbDP CC BY 3.0)",
    "LSJ headwords (grc-macronizer 1.3.0, lsj_word2macron)": "LSJ CC BY-SA; grc-macronizer package GPL-3.0",
}
LSJ = "lexica/grc_macronizer_db/lsj_word2macron.tsv.xz"
#: a word form: Greek letters, combining marks and an elision mark only
WORD = re.compile("[\u0370-\u03ff\u1f00-\u1fff\u0300-\u036f'\u2019\u02bc\u1fbd]+")


def papygreek_tms(mirror: Path) -> set[str]:
    """TM numbers of the documents PapyGreek annotates."""
    tms: set[str] = set()
    with tarfile.open(mirror / PAPYGREEK, mode="r|xz") as tar:
        for member in tar:
            if member.isfile() and member.name.endswith(".xml"):
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                meta = ET.parse(fh).getroot().find("document_meta")
                if meta is not None and meta.get("tm_id"):
                    tms.add(meta.get("tm_id", ""))
    return tms


def ddbdp_rows(mirror: Path, skip_tms: set[str], stats: Counter) -> Counter:
    """(form, lemma, tag) counts of the DDbDP tokens (module doc)."""
    rows: Counter = Counter()
    skip = False
    with lzma.open(mirror / DDBDP, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#"):
                if line.startswith("# newdoc"):
                    m = re.search(r"TM = (\S+)", line)
                    skip = bool(m and m.group(1) in skip_tms)
                    stats["ddbdp_docs_skipped" if skip else "ddbdp_docs"] += 1
                continue
            if skip:
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 9:
                continue
            form, complete, lemma, tag, flag = cols[4], cols[5], cols[6], cols[7], cols[8]
            if flag != "ok" or complete == "I" or len(tag) != 9 or not lemma or not WORD.fullmatch(form):
                stats["ddbdp_tokens_skipped"] += 1
                continue
            rows[(form, lemma, tag)] += 1
            stats["ddbdp_tokens"] += 1
    return rows


def treebank_rows(paths: list[Path], stats: Counter) -> Counter:
    """(form, lemma, tag) counts of the gold words of training DocBins."""
    rows: Counter = Counter()
    vocab = Vocab()
    for path in paths:
        for doc in DocBin().from_disk(path).get_docs(vocab):
            for tok in doc:
                if tok.lemma_ and len(tok.tag_) == 9 and WORD.fullmatch(tok.text):
                    rows[(tok.text, tok.lemma_, tok.tag_)] += 1
                    stats["treebank_tokens"] += 1
    return rows


def headwords(path: Path, stats: Counter) -> set[str]:
    """The Greek words of a ``word<TAB>markup`` list (NFC; the header and non-Greek rows left out)."""
    out = set()
    with lzma.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            word = unicodedata.normalize("NFC", line.split("\t", 1)[0].strip())
            if WORD.fullmatch(word) and any("\u0370" <= c <= "\u1fff" and c.isalpha() for c in word):
                out.add(word)
    stats["headwords"] = len(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--train", type=Path, action="append", default=[])
    ap.add_argument("--no-ddbdp", action="store_true")
    ap.add_argument("--stats", type=Path)
    ap.add_argument("--headwords", type=Path, default=None,
                    help=f"word<TAB>markup list of headwords (default: MIRROR/{LSJ}; 'none': no headwords)")
    a = ap.parse_args(argv)
    t0 = time.process_time()
    stats: Counter = Counter()
    rows = treebank_rows(a.train, stats)
    sources = [f"treebank training folds ({', '.join(p.as_posix() for p in a.train)}): "
               f"{LICENCES['treebank training folds']}"] if a.train else []
    if not a.no_ddbdp:
        tms = papygreek_tms(a.mirror)
        stats["papygreek_tms"] = len(tms)
        rows.update(ddbdp_rows(a.mirror, tms, stats))
        name = "DDbDP auto-lemmatized tokens (duke-nlp 2018)"
        sources.append(f"{name}, PapyGreek documents (by TM) left out: {LICENCES[name]}")
    heads: set[str] = set()
    if str(a.headwords) != "none":
        heads = headwords(a.headwords or a.mirror / LSJ, stats)
        name = "LSJ headwords (grc-macronizer 1.3.0, lsj_word2macron)"
        sources.append(f"{name}, lemmas without analyses: {LICENCES[name]}")
    table = FormTable.build(((f, lem, t, n) for (f, lem, t), n in rows.items()), sources=sources,
                            headwords=heads)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_disk(a.out)
    info = {"command": "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])]),
            "forms": len(table), "analyses": int(len(table.counts)), "lemmas": len(table.lemma_strings),
            "headwords": len(table.headwords),
            "sources": sources, "counts": dict(stats), "bytes": a.out.stat().st_size,
            "cpu_seconds": round(time.process_time() - t0, 1)}
    print(json.dumps(info, ensure_ascii=False, indent=1))
    if a.stats:
        a.stats.write_text(json.dumps(info, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
