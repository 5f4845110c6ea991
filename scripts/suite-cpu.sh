#!/usr/bin/env bash
# suite-cpu.sh: who spends the suite's CPU. Turns on the kernel's process
# accounting (root; the acct package's accton), runs go test with
# scripts/test.sh's flags over the given packages (default ./...), turns it
# off, and prints CPU and process counts per test package and per command
# (scripts/suitecpu). The records stay in $SUITE_CPU_OUT (default
# /tmp/suite-cpu.pacct). Accounting is machine-wide, so run it on a quiet
# machine: anything else that runs meanwhile is counted as well. It turns
# accounting off at the end, whatever had it on before.
#
#   bash scripts/suite-cpu.sh                 # the whole suite, 10-12 min idle
#   bash scripts/suite-cpu.sh ./e2e/fleet
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "suite-cpu.sh turns on process accounting, which needs root" >&2; exit 1; }
command -v accton >/dev/null || { echo "suite-cpu.sh needs accton (apt-get install acct)" >&2; exit 1; }
[ $# -gt 0 ] || set -- ./...
out=${SUITE_CPU_OUT:-/tmp/suite-cpu.pacct}
go build -o /tmp/suitecpu ./scripts/suitecpu
: >"$out"
accton "$out" >/dev/null
trap 'accton off >/dev/null' EXIT
start=$(date +%s)
status=0
go test -count=1 -timeout 30m -p 4 -parallel 4 "$@" >&2 || status=$?
accton off >/dev/null
echo "wall $(( $(date +%s) - start )) s; go test exit $status" >&2
/tmp/suitecpu "$out"
exit $status
