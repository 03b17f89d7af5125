#!/bin/sh
# Usage: scripts/backfill.sh START END
set -eu
python -m pipeline.cli run --since "$1" --until "$2" --full-refresh
