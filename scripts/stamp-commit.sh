#!/usr/bin/env bash
# Writes the current commit (with -dirty when tracked files changed) to .commit, so a
# copy of the tree without .git (or with a stale one), such as the one a GPU machine
# builds, still records in its CSV rows which source it ran. The build prefers
# .commit over git while it exists.
set -eu
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || commit="$commit-dirty"
echo "$commit" >.commit
echo "$commit"
