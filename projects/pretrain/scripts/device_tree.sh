#!/usr/bin/env bash
# The working tree that travels to a device machine (tracked + untracked-not-ignored files +
# carried paths) must stay under 64 MiB; the shipped weights under assets/models are ~87 MB and
# the membership indexes under assets/which_model ~24 MB (the pretrain bundle may take 45 MiB).
#   device_tree.sh on     move tracked files over 1 MiB under assets/models and assets/which_model
#                         into .git (never travels), marked skip-worktree so `git status` stays
#                         clean; print sizes
#   device_tree.sh off    put them back and check them against the index
#   device_tree.sh size   what would travel now, with .bundle carried
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
STASH="$(git rev-parse --absolute-git-dir)/device-stash"
BIG=(assets/models assets/which_model)
size() {
  local tree bundle
  tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | xargs -0 -r du -b 2>/dev/null | awk "{s += \$1} END {print s + 0}") || true
  bundle=$(du -sb .bundle 2>/dev/null | cut -f1 || echo 0)
  echo "working tree ${tree:-0} bytes + .bundle ${bundle:-0} bytes = $(( (${tree:-0} + ${bundle:-0}) / 1048576 )) MiB (limit 64 MiB)"
}
case "${1:-}" in
  on)
    mkdir -p "$STASH"
    git ls-files -z -- "${BIG[@]}" | while IFS= read -r -d '' f; do
      if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 1048576 ]; then
        mkdir -p "$STASH/$(dirname "$f")"
        git update-index --skip-worktree -- "$f"
        mv "$f" "$STASH/$f"
        echo "out: $f"
      fi
    done
    size ;;
  off)
    if [ -d "$STASH" ]; then
      (cd "$STASH" && find . -type f -print0) | while IFS= read -r -d '' f; do
        f=${f#./}
        mkdir -p "$(dirname "$f")"
        mv "$STASH/$f" "$f"
        git update-index --no-skip-worktree -- "$f"
        echo "back: $f"
      done
      rm -rf "$STASH"
    fi
    git diff --quiet -- "${BIG[@]}" && echo "${BIG[*]} match the index" ;;
  size) size ;;
  *) echo "usage: $0 on|off|size" >&2; exit 2 ;;
esac
