#!/bin/sh
# Calibrate hone's verdict protocol on this machine with a ~50 ms CPU-bound C
# workload: A/A sessions plus injected 5% and 2% slowdowns on the cpu-time
# tier, then A/A plus an injected 0.5% on the instructions tier.
#
#   scripts/calibrate.sh [SESSIONS] [INSTRUCTION-SESSIONS] [HOGS]
#
# INSTRUCTION-SESSIONS 0 skips the instructions tier. HOGS runs that many
# `yes > /dev/null` for the whole calibration: the loaded condition of the
# README's figures is 2. HONE names the hone binary (default: hone on PATH).
# Needs cc, and valgrind (or perf with hardware counters) for the
# instructions tier. Prints each calibration as text, with the load average.
set -eu
sessions=${1:-40}
isessions=${2:-10}
hogs=${3:-0}
hone=${HONE:-hone}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q -b main .
mkdir -p targets/w targets/wi
# The sample target walks 4 x STEPS; 9M steps is about 50 ms here.
sed 's/steps = 2500000/steps = 9000000/' "$here/verdict/testdata/ctarget/prog.c" > targets/w/prog.c
cp targets/w/prog.c targets/wi/prog.c
cat > hone.toml <<'TOML'
[targets.w]
build = "cc -O2 -g -o $HONE_OUT/prog prog.c"
  [targets.w.bench]
  run = "$HONE_OUT/prog"

# The instructions tier is near-deterministic: small batches decide.
[targets.wi]
build = "cc -O2 -g -o $HONE_OUT/prog prog.c"
  [targets.wi.bench]
  run = "$HONE_OUT/prog"
  metric = "instructions"
  pairs = 5
  max_pairs = 10
TOML
git add -A
git -c user.name=hone -c user.email=hone@invalid commit -q -m pin
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid
pids=
i=0
while [ "$i" -lt "$hogs" ]; do
	yes > /dev/null &
	pids="$pids $!"
	i=$((i + 1))
done
trap 'for p in $pids; do kill "$p"; done; rm -rf "$work"' EXIT
echo "load before: $(cat /proc/loadavg), $hogs hogs"
time "$hone" calibrate w --sessions "$sessions" --inject 0.05 --inject 0.02
echo "load after: $(cat /proc/loadavg)"
if [ "$isessions" -gt 0 ]; then
	time "$hone" calibrate wi --sessions "$isessions" --inject 0.005
fi
