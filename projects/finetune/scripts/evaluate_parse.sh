#!/usr/bin/env bash
# CoNLL-2018 scores (projects/parse/scripts/evaluate.py) of every returned parse arm of seed $1
# on the shared AGDT test and the UD Perseus test in its AGDT annotation -> metrics/parse/.
set -euo pipefail
seed=${1:-0}
for arm in joint frozen random nodiff; do
  model=training/returned/${arm}_s${seed}
  [ -d "$model" ] || { echo "skip $arm (no $model)"; continue; }
  python ../parse/scripts/evaluate.py "$model" ../parse/corpus/test.spacy --arm "$arm" --seed "$seed" --split test --metrics metrics/parse
  python ../parse/scripts/evaluate.py "$model" ../parse/corpus/ud_perseus_test_agdt.spacy --arm "$arm" --seed "$seed" --split ud_test_agdt --metrics metrics/parse
done
