#!/bin/sh
# Times the ledger as whole hone processes against git doing comparable work,
# interleaved in one run (see ledger/bench_test.go). The hone binary is built
# as it ships (scripts/build.sh) plus -tags honebench, which adds the hidden
# `hone bench-append` command that the shipped binary does not have. The
# append benchmark also times ledger/testdata/floor, built the same way: a
# process that links hone's libraries and does nothing.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scripts/build.sh "$dir/hone" -tags honebench
CGO_ENABLED=0 go build -trimpath -o "$dir/floor" ./ledger/testdata/floor
HONE_BENCH_BIN="$dir/hone" HONE_BENCH_FLOOR="$dir/floor" go test -run '^$' -bench "${BENCH:-.}" -benchtime "${BENCHTIME:-30x}" ./ledger
