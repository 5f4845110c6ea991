#!/usr/bin/env bash
# test.sh: the second of a newcomer's two commands, and what .ci/run calls.
# Installs what the tests drive (scripts/ci-deps.sh: as root, or through
# sudo), then runs the whole suite. Extra arguments go to go test (-short).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ci-deps.sh
exec go test "$@" ./...
