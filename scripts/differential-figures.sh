#!/bin/sh
# The differential gate's figure: VERDICTS real verdicts (default 20), each
# of a patch wrong on a different 1% of inputs (numbers ending in 00, 01,
# ...), judged with the default 1000 seeds and a fresh input seed per
# verdict. Every one must be rejected with a stored case that reproduces.
#
#   scripts/differential-figures.sh [VERDICTS]
#
# Needs go, cc and bubblewrap; takes about 10 s per verdict on two cores.
set -eu
cd "$(dirname "$0")/.."
HONE_DIFFERENTIAL_VERDICTS=${1:-20} exec go test -count=1 -timeout 60m -run 'TestDifferentialGateRejectsEveryOnePercentPatch$' -v ./verdict/
