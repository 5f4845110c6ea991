#!/usr/bin/env bash
# Judges real projects as a new user would (docs/development.md, "Real
# projects, on demand"): an idle machine, the real meter, a quarter of an hour.
#
#   bash scripts/realworld.sh [go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ci-deps.sh
HONE_TIER=measure exec go test -tags hone_realworld -timeout 90m -p 1 -count=1 -v -run '^TestMeasureXXHash' "$@" ./e2e/realgo/
