#!/usr/bin/env bash
# Norma scores of the returned scanner arms.
# 1. The published protocol (1,916 positions; projects/meter/scripts/macron_eval.py --pipeline):
#    backbone, calibrated and backbone + macron lexicon arms per pipeline ->
#    metrics/meter/macron_ARM.json (needs ../meter/assets/macron_lexicon.json.gz: `weasel run
#    macron-lexicon ../meter`).
# 2. meter_eval.py's harness over seeds (scripts/meter_arms.py): design A (heads on the joint
#    backbone), B (heads on the frozen base), end to end with its random-init controls (paired
#    by seed: exact sign-flip test). Extra arguments (e.g. --quick) go to meter_arms.py.
set -euo pipefail
for d in training/returned/scanner_*_s* training/returned/scanner_s*; do
  [ -d "$d" ] || continue
  arm=${d##*/}
  python ../meter/scripts/macron_eval.py "metrics/meter/macron_${arm}.json" --pipeline "$d" \
    --lexicon ../meter/assets/macron_lexicon.json.gz --calibration "training/macron_calibration_${arm}.json"
done
arms() {  # $1 = name prefix, $2 = option
  for d in training/returned/$1_s*; do [ -d "$d" ] && printf -- '%s %s=%s ' "$2" "${d##*/}" "$d"; done; true
}
python scripts/meter_arms.py metrics/meter/joint.json $(arms scanner_joint --arm) "$@"
python scripts/meter_arms.py metrics/meter/frozen.json $(arms scanner_frozen --arm) "$@"
python scripts/meter_arms.py metrics/meter/end_to_end.json $(arms scanner --arm) $(arms scanner_random --random) "$@"
