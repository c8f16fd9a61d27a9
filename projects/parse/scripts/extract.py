"""Untar the treebank archives of the asset mirror into ``assets/`` (data-prep step ``extract``)."""

from __future__ import annotations

import shutil
import sys
import tarfile
from pathlib import Path

from stoicheia_lab.treebanks.readers import SOURCES

UD_FILES = [
    "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-dev.conllu.xz",
    "ud/UD_Ancient_Greek-Perseus/grc_perseus-ud-test.conllu.xz",
]


def main(mirror: str, assets: str) -> int:
    mirror_dir, assets_dir = Path(mirror), Path(assets)
    for spec in SOURCES.values():
        archive = mirror_dir / spec.archive
        target = assets_dir / spec.archive.removesuffix(".tar.xz")
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(target, filter="data")
        print(f"{spec.name}: {archive} -> {target}")
    for rel in UD_FILES:
        (assets_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(mirror_dir / rel, assets_dir / rel)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
