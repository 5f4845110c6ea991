#!/usr/bin/env bash
# test.sh: the second of a newcomer's two commands, and what .ci/run calls.
# Installs what the tests drive (scripts/ci-deps.sh: as root, or through
# sudo), then runs one tier of the suite (docs/development.md, "Test tiers"):
#
#   bash scripts/test.sh             the default tier: every defence against the
#                                    real jail, builds, gates and hooks, decided by
#                                    evidence, not by the clock (a busy machine is fine)
#   bash scripts/test.sh --measure   the measurement tier: the tests whose subject is
#                                    measurement, with the real meter (an idle machine)
#   go test -short ./...             the unit tier: hermetic, no jail, no hone binary
#
# Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=default
if [ "${1:-}" = --measure ]; then
	tier=measure
	shift
fi
bash scripts/ci-deps.sh
if [ "$tier" = measure ]; then
	# The real meter (no work-meter tag), one package at a time: these
	# tests time things, and the machine's benches take turns anyway. The
	# measurement tier's tests are named TestMeasure*, and may not skip.
	HONE_TIER=measure exec go test -timeout 60m -p 1 -run '^TestMeasure' "$@" ./...
fi
# The test builds' work meter (internal/testbuild): verdicts measure the
# work each bench run declares, so no decision here depends on the clock.
# go test's default limit is 10 minutes per package binary; on a loaded
# machine a package of correct decisions must fail on a decision, never on
# the clock, so the limit is 30 minutes (a later -timeout wins).
# Four packages and four tests of a package at once: the end-to-end tests
# spend most of their time waiting for jails and builds.
exec go test -tags hone_testmeter -timeout 30m -p 4 -parallel 4 "$@" ./...
