#!/usr/bin/env bash
# Wheels for the GPU machine (Python 3.12, x86-64; torch, numpy, safetensors, typer, rich,
# requests, jinja2 are already there, spaCy is not). Downloads, with pip, the exact pins of
# requirements/lock.txt for what `import stoicheia_spacy.encoder.pipe` and `spacy train` import,
# into .whl/ at the repository root (git-ignored through .git/info/exclude). ~20 MiB.
#   bash projects/finetune/scripts/wheels.sh          (on CPU, once; needs PyPI)
# On the device:  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#   --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=$PWD:/tmp/site
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.whl/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null || echo '/.whl/' >> "$(git rev-parse --git-common-dir)/info/exclude"
PKGS="annotated-types blis catalogue cloudpathlib confection cymem murmurhash preshed pydantic pydantic_core smart_open spacy srsly thinc typing-inspection wasabi weasel"
PINS=()
for p in $PKGS; do
  pin=$(grep -i "^${p}==" requirements/lock.txt || true)
  [ -n "$pin" ] || { echo "no pin for $p in requirements/lock.txt" >&2; exit 2; }
  PINS+=("$pin")
done
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "${PINS[@]}"
du -sh .whl
