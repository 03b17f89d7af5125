#!/bin/sh
# Tag a release vX.Y.Z and prepend its changelog entry, built from the Conventional
# Commit messages since the last tag.
set -eu
version="$1"
git-cliff --tag "v$version" --prepend CHANGELOG.md
git add CHANGELOG.md
git commit -m "chore(release): v$version"
git tag -a "v$version" -m "shopfront v$version"
