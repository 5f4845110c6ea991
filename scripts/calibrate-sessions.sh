#!/bin/sh
# The calibration figures of issue 23 in one command: on the README's ~50 ms
# CPU-bound C sample workload (cpu-time tier, default protocol: batches of
# 10 pairs up to 30), SESSIONS sessions each of A/A, an injected 5% and 2%
# slowdown, and an injected 2% speedup (exactly the threshold: its accepts
# are false accepts at the boundary).
#
#   scripts/calibrate-sessions.sh [SESSIONS] [HOGS]
#
# SESSIONS defaults to 20. HOGS runs that many `yes > /dev/null` beside it
# (the loaded condition is 2; the quiet set is 0, on an otherwise idle
# machine). HONE names the hone binary (default: hone on PATH). Prints the
# load average before and after and the calibration as text.
#
# Duration on an idle 2-core machine: about 80 sessions of 1 to 3 s plus
# two builds, 3 to 5 minutes at 20 sessions; hone prints its own estimate
# first. With two hogs, about twice that.
set -eu
sessions=${1:-20}
hogs=${2:-0}
hone=${HONE:-hone}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=
trap 'for p in $pids; do kill "$p"; done; rm -rf "$work"' EXIT
cd "$work"
git init -q -b main .
mkdir -p targets/w
# The sample target walks 4 x STEPS; 9M steps is about 50 ms here.
sed 's/steps = 2500000/steps = 9000000/' "$here/verdict/testdata/ctarget/prog.c" > targets/w/prog.c
cat > hone.toml <<'TOML'
[targets.w]
build = "cc -O2 -g -o $HONE_OUT/prog prog.c"
  [targets.w.bench]
  run = "$HONE_OUT/prog"
  # One code layout: these figures are the decision rule's; the layout
  # shift has its own (scripts/layout-sessions.sh).
  layouts = 1
TOML
git add -A
git -c user.name=hone -c user.email=hone@invalid commit -q -m pin
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid
i=0
while [ "$i" -lt "$hogs" ]; do
	yes > /dev/null &
	pids="$pids $!"
	i=$((i + 1))
done
echo "load before: $(cat /proc/loadavg), $hogs hogs, $sessions sessions of each kind"
start=$(date +%s)
"$hone" calibrate w --sessions "$sessions" --inject 0.05 --inject 0.02 --inject -0.02
echo "load after: $(cat /proc/loadavg), $(( $(date +%s) - start )) s"
