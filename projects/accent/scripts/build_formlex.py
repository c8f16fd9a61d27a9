"""Build the accent lexicon (stoicheia_spacy.accent.formlex) from the open-data mirror.

usage: build_formlex.py MIRROR OUT.npz [--treebanks agdt,homer,gorman,pedalion]
                        [--literary-limit N] [--no-hunspell]

Sources: the Hunspell-derived form list (every form, count 0: attested, frequency
unknown), the word forms of the AGDT / Gorman / Pedalion treebanks and (``--literary-limit``
records per source) of the CC BY-SA literary sources (Perseus, GLAUx), with corpus counts.  Every
treebank sentence and literary record that overlaps the UD Perseus or PROIEL dev or test
sets (a shared bare-word 6-gram, or the same short sentence) is skipped: dev sets tune the
decoder, test sets score it.  Licences of the output: GPL-3.0 (Hunspell list) and
CC BY-SA (treebanks); see projects/accent/README.md / LICENSE-lexicon.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time
from pathlib import Path

from stoicheia_lab.accent.evaluate import read_ud_texts
from stoicheia_lab.corpus import iter_records
from stoicheia_lab.treebanks.readers import iter_source

from stoicheia_spacy.accent.formlex import FormCounter
from stoicheia_spacy.accent.lexicon import HeldOutScreen
from stoicheia_spacy.codec import encode_planes

HELD_OUT = [
    "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
    "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz",
    "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-test.conllu.xz",
    "ud/UD_Ancient_Greek-PROIEL/grc_proiel-ud-dev.conllu.xz",
]
HUNSPELL = "lexica/grc_hunspell_wordforms.txt.xz"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror")
    ap.add_argument("out")
    ap.add_argument("--treebanks", default="agdt,homer,gorman,pedalion")
    ap.add_argument("--literary", default="perseus,glaux", help="only sources whose licence fits the package (CC BY-SA)")
    ap.add_argument("--literary-limit", type=int, default=400, help="records per literary source (0: none)")
    ap.add_argument("--no-hunspell", action="store_true")
    a = ap.parse_args(argv)
    mirror = Path(a.mirror)
    t0 = time.time()
    screen = HeldOutScreen(t for rel in HELD_OUT for t in read_ud_texts(mirror / rel))
    counter = FormCounter()
    stats: dict[str, dict[str, int]] = {}
    if not a.no_hunspell:
        with lzma.open(mirror / HUNSPELL, "rt", encoding="utf-8") as fh:
            counter.add_forms((line, 0) for line in fh)
        stats["hunspell"] = {"rows": len(counter.rows)}
        print(f"hunspell: {len(counter.rows)} forms ({time.time() - t0:.0f}s)", flush=True)
    for name in filter(None, a.treebanks.split(",")):
        kept = dropped = 0
        for sent in iter_source(mirror, name):
            planes = encode_planes(" ".join(sent.forms))
            if screen.overlaps(planes):
                dropped += 1
                continue
            counter.add_planes(planes)
            kept += 1
        stats[name] = {"sentences": kept, "held_out": dropped}
        print(f"{name}: {kept} sentences, {dropped} overlapping held-out text ({time.time() - t0:.0f}s)", flush=True)
    for name in filter(None, a.literary.split(",")) if a.literary_limit else []:
        kept = dropped = 0
        for rec in iter_records(name, mirror, a.literary_limit):
            planes = encode_planes(rec["text"])
            if screen.overlaps(planes):
                dropped += 1
                continue
            counter.add_planes(planes)
            kept += 1
        stats[name] = {"records": kept, "held_out": dropped}
        print(f"{name}: {kept} records, {dropped} overlapping ({time.time() - t0:.0f}s)", flush=True)
    sources = json.dumps({"sources": stats, "licenses": {
        "hunspell": "GPL-3.0 (mrakia/hunspell-ancient-greek via @cspell/dict-grc 1.0.7)",
        "agdt": "CC BY-SA 3.0 US", "homer": "CC BY-SA 3.0 US", "gorman": "CC BY-SA 4.0",
        "pedalion": "CC BY-SA 4.0", "perseus": "CC BY-SA 3.0 US", "glaux": "CC BY-SA 4.0"},
        "held_out": HELD_OUT}, ensure_ascii=False)
    lex = counter.build(sources=sources)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    lex.to_disk(a.out)
    print(f"lexicon: {len(lex)} forms, {lex.n_bare} bare forms, {int(lex.count.sum())} tokens -> {a.out} "
          f"({time.time() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
