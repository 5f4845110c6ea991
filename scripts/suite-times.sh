#!/usr/bin/env bash
# suite-times.sh: where the suite's time goes. Runs go test -json over the
# given packages (default ./...; extra go test flags after --), then prints
# each package's wall time, slowest first, and its five slowest tests, with
# the load average at the start and the end beside them. The raw events are
# kept in $SUITE_TIMES_OUT (default /tmp/suite-times.json) for a closer look.
#
#   bash scripts/suite-times.sh                      # the whole suite, 5-15 min
#   bash scripts/suite-times.sh ./e2e/gaming -- -run TestGaming
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "suite-times.sh needs jq (apt-get install jq)" >&2; exit 1; }

pkgs=() flags=()
while [ $# -gt 0 ]; do
	if [ "$1" = -- ]; then shift; flags=("$@"); break; fi
	pkgs+=("$1"); shift
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)
out=${SUITE_TIMES_OUT:-/tmp/suite-times.json}

echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
start=$(date +%s)
status=0
go test -json ${flags[@]+"${flags[@]}"} "${pkgs[@]}" >"$out" || status=$?
echo "load at end:   $(cut -d' ' -f1-3 /proc/loadavg); wall $(( $(date +%s) - start )) s; go test exit $status" >&2

# A package's Elapsed is its test binary's wall time; tests run inside it.
jq -rs '
	[.[] | select(.Test == null and (.Action == "pass" or .Action == "fail" or .Action == "skip") and .Elapsed != null)]
	| sort_by(-.Elapsed) | .[] | "\(.Elapsed*10|floor/10|tostring) s\t\(.Action)\t\(.Package)"' "$out" \
	| column -t -s $'\t'
echo
echo "slowest tests per package (top-level tests, seconds):"
jq -rs '
	[.[] | select(.Test != null and (.Test | contains("/") | not) and (.Action == "pass" or .Action == "fail") and .Elapsed != null)]
	| group_by(.Package) | map(sort_by(-.Elapsed) | .[:5]) | sort_by(-.[0].Elapsed) | .[][]
	| "\(.Elapsed*10|floor/10|tostring)\t\(.Action)\t\(.Package)\t\(.Test)"' "$out" \
	| column -t -s $'\t'
exit $status
