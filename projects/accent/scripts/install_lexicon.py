"""Install the newest built ``stoicheia-lexicon-grc`` wheel into this environment.

usage: install_lexicon.py DIST_DIR
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    wheels = sorted(Path(argv[0]).glob("stoicheia_lexicon_grc-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        print(f"no stoicheia_lexicon_grc wheel in {argv[0]}: run lexicon-package first", file=sys.stderr)
        return 1
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", str(wheels[-1])],
                   check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
