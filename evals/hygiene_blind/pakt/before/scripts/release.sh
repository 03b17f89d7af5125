#!/bin/sh
# Release from a vX.Y.Z tag: goreleaser builds the archives from the tag.
set -eu
git describe --exact-match --tags HEAD >/dev/null
goreleaser release --clean
