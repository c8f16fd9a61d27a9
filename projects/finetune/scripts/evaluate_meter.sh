#!/usr/bin/env bash
# Norma scores (meter_eval.py's harness, scripts/meter_arms.py) of the returned scanner arms:
# design A (heads on the joint backbone), B (heads on the frozen base), end to end with its
# random-init controls (paired by seed: sign-flip test). Extra arguments (e.g. --quick) pass on.
set -euo pipefail
arms() {  # $1 = name prefix, $2 = option
  for d in training/returned/$1_s*; do [ -d "$d" ] && printf -- '%s %s=%s ' "$2" "${d##*/}" "$d"; done; true
}
python scripts/meter_arms.py metrics/meter/joint.json $(arms scanner_joint --arm) "$@"
python scripts/meter_arms.py metrics/meter/frozen.json $(arms scanner_frozen --arm) "$@"
python scripts/meter_arms.py metrics/meter/end_to_end.json $(arms scanner --arm) $(arms scanner_random --random) "$@"
