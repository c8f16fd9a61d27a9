"""Lay out (and build a wheel of) the separately installable accent-lexicon data package.

usage: package_lexicon.py MIRROR LEXICON.npz OUT_DIR [--macron-lexicon FILE] [--restore-lm FILE] [--restore-kn FILE]
                          [--parallels DIR] [--domain-sources DOMAIN=DIR ...]
                          [--form-table FILE]
                          [--version V] [--no-wheel]

The code package (MIT) never contains the lexicon: its sources are GPL-3.0 (Hunspell form
list) and CC BY-SA (treebanks), so it ships as ``stoicheia-lexicon-grc``
(stoicheia_spacy.accent.lexasset).  ``pip install OUT_DIR/dist/stoicheia_lexicon_grc-*.whl``
makes the default pipeline and ``stoicheia accentuate`` use it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from stoicheia_spacy.accent.lexasset import write_data_package


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mirror")
    ap.add_argument("lexicon")
    ap.add_argument("out")
    ap.add_argument("--macron-lexicon", default=None,
                    help="the scanner's macron_lexicon.json.gz (projects/meter macron-lexicon), shipped in the same package")
    ap.add_argument("--restore-lm", default=None,
                    help="the restorer's character n-gram LM (make restore-lm), shipped in the same package")
    ap.add_argument("--restore-kn", default=None,
                    help="the restorer's Kneser-Ney 8-gram (make restore-lm), shipped in the same package")
    ap.add_argument("--parallels", default=None,
                    help="the parallels index folder (make parallels-index), shipped in the same package")
    ap.add_argument("--domain-sources", action="append", default=[], metavar="DOMAIN=DIR",
                    help="a domain's restoration sources folder (projects/restore inscriptions-lm), shipped as domains/DOMAIN")
    ap.add_argument("--form-table", default=None,
                    help="the morphosyntax form table (projects/parse/scripts/build_form_table.py), shipped in the same package")
    ap.add_argument("--version", default="0.1.0")
    ap.add_argument("--no-wheel", action="store_true")
    a = ap.parse_args(argv)
    licence = (Path(a.mirror) / "lexica/hunspell_grc/LICENSE").read_text(encoding="utf-8")
    macron = a.macron_lexicon if a.macron_lexicon and Path(a.macron_lexicon).is_file() else None
    lm = a.restore_lm if a.restore_lm and Path(a.restore_lm).is_file() else None
    kn = a.restore_kn if a.restore_kn and Path(a.restore_kn).is_file() else None
    par = a.parallels if a.parallels and Path(a.parallels).is_dir() else None
    table = a.form_table if a.form_table and Path(a.form_table).is_file() else None
    domains = {name: folder for name, _, folder in (x.partition("=") for x in a.domain_sources)
               if Path(folder).is_dir()}
    root = write_data_package(a.lexicon, a.out, licence, version=a.version, macron_lexicon=macron, restore_lm=lm,
                              restore_kn=kn, parallels=par, form_table=table, domain_sources=domains)
    print(f"data package laid out in {root}")
    if not a.no_wheel:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(Path(a.out) / "dist"), str(root)], check=True)
        print(f"wheel in {Path(a.out) / 'dist'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
