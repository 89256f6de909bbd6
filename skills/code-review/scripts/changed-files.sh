#!/bin/sh
# Lists the files changed on this branch against BASE (default: the upstream branch, else
# main, else master), with their status and size of change, plus uncommitted and untracked
# files. Args: [BASE]
set -eu
base="${1:-}"
if [ -z "$base" ]; then
  base=$(git rev-parse --abbrev-ref --symbolic-full-name '@{upstream}' 2>/dev/null || true)
fi
if [ -z "$base" ]; then
  for b in main master; do
    if git rev-parse --verify --quiet "$b" >/dev/null; then base=$b; break; fi
  done
fi
if [ -n "$base" ]; then
  echo "Committed changes against $base:"
  git diff --stat=200 "$base"...HEAD
fi
echo "Uncommitted changes:"
git status --short
