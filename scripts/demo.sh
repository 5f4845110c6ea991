#!/usr/bin/env bash
# demo.sh: the first of a newcomer's two commands. Installs what hone's demo
# needs (scripts/ci-deps.sh: as root, or through sudo), then runs the
# built-in example session. Extra arguments go to `hone demo` (--keep DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ci-deps.sh
exec go run ./cmd/hone demo "$@"
