#!/bin/sh
# harness-crosscheck.sh: hone's per-benchmark figures for a go harness bench
# beside what the same two test binaries cost outside hone, through
# golang.org/x/perf/cmd/benchstat (the module's own dependency).
#
# Each session makes a fresh workspace holding the small Go module of the
# e2e/harness tests, with a large and a small deciding benchmark
# (BenchmarkBig about twenty times BenchmarkSmall), proposes a patch that
# halves BenchmarkBig's work, and judges it with `hone verdict`. It then
# builds the pin and the patch with the target's own build command
# (go test -c) and, COUNT times, runs each binary's each benchmark alone at
# the two counts hone chose, N and 2N, bare (no jail, no hone) under
# `perf stat -e task-clock`: the CPU time of each run, all threads. The
# difference over N is the loop's CPU time per iteration, written as a
# cpu-sec/op benchmark line for benchstat. go test's own ns/op is wall
# time of the loop, which on a loaded machine exceeds its CPU time by the
# time the process waited for a core, so it is not what hone's CPU figure
# can be held to. Compared:
#   - hone's per-iteration CPU time of each benchmark on each side against
#     benchstat's median of the bare runs, within 15%;
#   - hone's speedup CI of each benchmark against the ratio of benchstat's
#     medians (baseline over candidate).
#
# Usage: scripts/harness-crosscheck.sh [SESSIONS [COUNT]]   (defaults 1 and 10)
#        MODULE=humanize scripts/harness-crosscheck.sh ...   (go-humanize; see below)
#        MAX_LOOP=100ms scripts/harness-crosscheck.sh ...    ([bench] max_loop)
#
# Each benchmark gets COUNT repetitions, or with BUDGET=S as many (up to
# COUNT) as fit in S seconds of CPU time, so that a short benchmark gets
# more than a long one. The reference is a noisy estimate too: benchstat's
# ratio of two medians moved by 2-3% between sessions at 30 repetitions
# here, about as much as hone's own estimate, so a 95% CI covers it in
# only about 8 sessions of 10; 9 of 10 needs a reference several times as
# precise (issue 28: BUDGET=150 with COUNT 200).
# Needs go, git, bwrap, perf and jq. Prints one line per benchmark per
# session and a tally; exits 1 when any comparison failed. A session takes
# about two minutes on a quiet 2-core machine.
set -eu

sessions=${1:-1}
count=${2:-10}
budget=${BUDGET:-0}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
goroot=$(go env GOROOT)

(cd "$root" && go build -o "$work/bin/hone" ./cmd/hone && go build -o "$work/bin/benchstat" golang.org/x/perf/cmd/benchstat)
PATH=$work/bin:$PATH
export PATH GIT_AUTHOR_NAME=crosscheck GIT_AUTHOR_EMAIL=crosscheck@hone.invalid \
	GIT_COMMITTER_NAME=crosscheck GIT_COMMITTER_EMAIL=crosscheck@hone.invalid

ro=""
case $goroot in /usr/*) ;; *) ro="[sandbox]
read_only = [\"$goroot\"]
" ;; esac

# cpu_seconds BIN BENCHMARK COUNT prints the CPU time in seconds of one
# bare run of the benchmark alone at COUNT iterations.
cpu_seconds() {
	perf stat -x, -e task-clock -- "$1" -test.run='^$' -test.bench="^$2\$" -test.benchtime="$3x" 2>&1 >/dev/null |
		awk -F, '$3 ~ /^task-clock/ {print $1 / 1e3}'
}

# MODULE picks the module judged: "harness" (default), the small module of
# e2e/harness whose patch makes Big fold once instead of twice; or
# "humanize", go-humanize v1.1.0 fetched through the module proxy as
# e2e/goharness does, whose patch is that test's BigComma fast path (an
# int64 is formatted by Comma, without big.Int division), judged on
# BenchmarkBigCommas beside BenchmarkCommaf as that test judges it.
case ${MODULE:-harness} in
harness)
	patched=work.go
	hotspot=fold
	gate=
	benchrun="-test.bench=. -test.benchtime=200x"
	protect='["**/*_test.go", "go.mod"]'
	extra='outputs = ["checksum"]'
	;;
humanize)
	humanize=$(go mod download -json github.com/dustin/go-humanize@v1.1.0 | jq -r .Dir)
	patched=comma.go
	hotspot=BigComma
	gate='[[targets.m.gates]]
name = "unit"
run  = "$HONE_OUT/bench.test -test.run=. -test.count=1"'
	benchrun="-test.bench='^Benchmark(BigCommas|Commaf)\$' -test.benchtime=300000x"
	protect='["**/*_test.go", "go.mod", "go.sum"]'
	extra='benchmarks = ["BenchmarkBigCommas"]'
	;;
*)
	echo "harness-crosscheck.sh: MODULE is harness or humanize, not $MODULE" >&2
	exit 2
	;;
esac

# module copies the module judged into $1, writable; with "fast", the
# patched one.
module() {
	mkdir -p "$1"
	if [ -n "${humanize:-}" ]; then
		cp "$humanize"/*.go "$humanize"/go.mod "$1/"
		chmod -R u+w "$1"
		if [ "${2:-}" = fast ]; then
			perl -0pi -e 's/func BigComma\(bin \*big\.Int\) string \{\n\tb := new\(big\.Int\)\.Set\(bin\)/func BigComma(bin *big.Int) string {\n\tif bin.IsInt64() {\n\t\treturn Comma(bin.Int64())\n\t}\n\tb := new(big.Int).Set(bin)/' "$1/comma.go"
			grep -q 'bin.IsInt64()' "$1/comma.go" || { echo "harness-crosscheck.sh: go-humanize's BigComma no longer matches the patch" >&2; exit 1; }
		fi
		return
	fi
	cp "$root"/e2e/harness/testdata/module/* "$1/"
	if [ "${2:-}" = fast ]; then
		sed -i '/^func Big/,/^}/c\
func Big(seed uint64) uint64 { return fold(seed, 1000) }' "$1/work.go"
	fi
}

within=0
covered=0
total=0
for session in $(seq "$sessions"); do
	repo=$work/s$session/repo
	module "$repo/m"
	cat >"$repo/hone.toml" <<EOF
${ro}[bench]
pairs     = 5
max_pairs = 10
threshold = 0.1
${MAX_LOOP:+max_loop  = \"$MAX_LOOP\"}

[targets.m]
path    = "m"
pin     = "main"
protect = $protect
files   = ["*.go"]
build   = "PATH=$goroot/bin:\$PATH go test -c -o \$HONE_OUT/bench.test ."

$gate

[targets.m.bench]
format  = "go"
run     = "\$HONE_OUT/bench.test -test.run='^\$' $benchrun"
$extra
EOF
	(
		cd "$repo"
		git init -q -b main && git add -A && git commit -qm module
		hone init >/dev/null
		module "$work/s$session/fast" fast
		cp "$work/s$session/fast/$patched" "m/$patched"
		git diff >"$work/s$session/patch.diff"
		git checkout -q -- .
		id=$(hone patch propose m --hotspot "$hotspot" --class 1 --hypothesis "the ${MODULE:-harness} patch" --file "$work/s$session/patch.diff" --json | jq -r .patch_id)
		hone verdict "$id" --json >"$work/s$session/verdict.json"
		for side in base cand; do
			src=$work/s$session/$side
			if [ $side = base ]; then module "$src"; else module "$src" fast; fi
			(cd "$src" && go test -c -o "$src/bench.test" .)
		done
		jq -r '.bench.benchmarks[] | [.name, .counts[0], .counts[1]] | @tsv' "$work/s$session/verdict.json" >"$work/s$session/counts"
		while read -r name short long; do
			rep=0 spent=0
			while [ "$rep" -lt "$count" ] && { [ "$budget" -eq 0 ] || awk -v s="$spent" -v b="$budget" 'BEGIN {exit !(s < b)}'; }; do
				rep=$((rep + 1))
				sides="base cand"
				[ $((rep % 2)) -eq 0 ] && sides="cand base"
				for side in $sides; do
					a=$(cpu_seconds "$work/s$session/$side/bench.test" "$name" "$short")
					b=$(cpu_seconds "$work/s$session/$side/bench.test" "$name" "$long")
					spent=$(awk -v t="$spent" -v a="$a" -v b="$b" 'BEGIN {print t + a + b}')
					awk -v n="$name" -v s="$short" -v l="$long" -v a="$a" -v b="$b" 'BEGIN {printf "%s %d %.12g cpu-sec/op\n", n, s, (b - a) / (l - s)}' >>"$work/s$session/$side.txt"
				done
			done
			echo "$name $rep" >>"$work/s$session/reps"
		done <"$work/s$session/counts"
	)
	benchstat -format csv "$work/s$session/base.txt" "$work/s$session/cand.txt" 2>/dev/null |
		awk -F, '/^,cpu-sec\/op/ {t=1; next} /^$/ {t=0} t && $1 !~ /geomean/ {print $1, $2*1e9, $4*1e9}' | sed 's/^Benchmark//' >"$work/s$session/gotest"
	jq -r '.bench.benchmarks[] | [.name, .cpu_stats.baseline_median, .cpu_stats.candidate_median, .cpu_stats.speedup, .cpu_stats.ci_low, .cpu_stats.ci_high, (.counts | map(tostring) | join("/"))] | @tsv' \
		"$work/s$session/verdict.json" | sed 's/^Benchmark//' >"$work/s$session/hone"
	verdict=$(jq -r '.verdict + " (" + .reason + ")"' "$work/s$session/verdict.json")
	load=$(cut -d' ' -f1 /proc/loadavg)
	while read -r name hb hc speedup lo hi counts; do
		set -- $(awk -v n="$name" '$1 == n {print $2, $3}' "$work/s$session/gotest")
		gb=$1 gc=$2
		line=$(awk -v hb="$hb" -v hc="$hc" -v gb="$gb" -v gc="$gc" -v s="$speedup" -v lo="$lo" -v hi="$hi" 'BEGIN {
			db = (hb - gb) / gb; dc = (hc - gc) / gc; r = gb / gc
			ok = (db < 0 ? -db : db) <= 0.15 && (dc < 0 ? -dc : dc) <= 0.15
			cov = lo <= r && r <= hi
			printf "%d %d hone %.0f/%.0f ns/op, bare %.0f/%.0f cpu-ns/op (%+.1f%%, %+.1f%%); speedup %.3f [%.3f, %.3f], benchstat %.3f", ok, cov, hb, hc, gb, gc, 100*db, 100*dc, s, lo, hi, r }')
		set -- $line
		within=$((within + $1)) covered=$((covered + $2)) total=$((total + 1))
		shift 2
		reps=$(awk -v n="Benchmark$name" '$1 == n {print $2}' "$work/s$session/reps")
		echo "session $session load $load $verdict Benchmark$name counts $counts reps $reps: $*"
	done <"$work/s$session/hone"
done
echo "per-op within 15%: $within of $total; speedup CI covers benchstat's ratio: $covered of $total"
[ "$within" -eq "$total" ] && [ "$covered" -eq "$total" ]
