#!/bin/sh
# Times the ledger as whole hone processes against git doing comparable work,
# interleaved in one run (see ledger/bench_test.go). The hone binary is built
# as it ships (scripts/build.sh) plus -tags honebench, which adds the hidden
# `hone bench-append` command that the shipped binary does not have.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scripts/build.sh "$dir/hone" -tags honebench
HONE_BENCH_BIN="$dir/hone" go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-30x}" ./ledger
