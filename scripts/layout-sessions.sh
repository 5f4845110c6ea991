#!/bin/sh
# Real verdicts of candidates that change nothing but where the code lands,
# on the alignment-sensitive C target of e2e/layout/testdata: the pin plus a
# sleep after the work, an unused function before the hot one, and 16, 32
# and 48 bytes of padding before it, SESSIONS times each (each in a fresh
# repository: one idea is judged once per pin); then a flood of FLOOD
# padding-only variants in one repository, each judged once; then the
# honest patch that drops the pin's wasted walk (2x).
#
#   scripts/layout-sessions.sh [SESSIONS] [HOGS] [FLOOD]
#
# HOGS runs that many `yes > /dev/null` throughout. LAYOUTS sets [bench]
# layouts (LAYOUTS=1 is hone judging one build per side). HONE names the hone
# binary (default: built from this checkout). Prints one line per verdict
# (variant, verdict, reason, speedup and CI, whether the CI covers 1, the
# baseline's spread between layouts, flags, bench and layout-build seconds,
# layout builds relinked and taken from the cache) and a tally per variant,
# with the load average. Needs cc, bwrap and jq. Issue 29's two sets are
# `scripts/layout-sessions.sh 10 0 20` (quiet) and
# `scripts/layout-sessions.sh 10 2 20` (two hogs): 71 verdicts each, about
# 25 minutes on a quiet two-core machine, 75 minutes at a load of 30-45.
set -eu
sessions=${1:-10}
hogs=${2:-0}
flood=${3:-20}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
hone=${HONE:-}
if [ -z "$hone" ]; then
	hone=$work/hone
	"$here/scripts/build.sh" "$hone"
fi
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1
i=0
while [ "$i" -lt "$hogs" ]; do
	yes > /dev/null &
	pids="$pids $!"
	i=$((i + 1))
done

# fresh makes a repository with the pin in $work/$1 and prints its path.
fresh() {
	dir=$work/$1
	mkdir -p "$dir/targets/c"
	sed "s/^threshold = \(.*\)/threshold = \1\nlayouts = ${LAYOUTS:-4}/" "$here/e2e/layout/testdata/hone.toml" > "$dir/hone.toml"
	cp "$here/e2e/layout/testdata/prog.c" "$dir/targets/c/prog.c"
	(cd "$dir" && git init -q -b main . && git add -A && git commit -q -m pin && "$hone" init > /dev/null)
	echo "$dir"
}

hot='__attribute__((noinline)) static unsigned long spin'

# variant NAME writes prog.c of the variant NAME to stdout.
variant() {
	src=$here/e2e/layout/testdata/prog.c
	case $1 in
	sleep) sed -e 's/#include <stdlib.h>/#include <stdlib.h>\n#include <unistd.h>/' -e 's/^\treturn 0;/\tusleep(300000);\n\treturn 0;/' "$src" ;;
	unused) sed "s/^$hot/__attribute__((used, noinline)) unsigned long unused_mix(unsigned long x) { return x * 2654435761u + 7; }\n$hot/" "$src" ;;
	pad*) sed "s/^$hot/__attribute__((used, section(\".text\"))) static const char pad[${1#pad}] = {1};\n$hot/" "$src" ;;
	honest) sed -e '/volatile unsigned long sink/d' -e '/(void)sink;/d' "$src" ;;
	esac
}

# judge DIR NAME proposes variant NAME in DIR, judges it and prints a line.
judge() {
	(
		cd "$1"
		variant "$2" > targets/c/prog.c
		git diff > ../idea.diff
		git checkout -q -- .
		id=$("$hone" patch propose c --hotspot spin --class 1 --hypothesis "layout: $2" --file ../idea.diff --json | jq -r .patch_id)
		"$hone" verdict "$id" --json | jq -r --arg v "$2" '
			(.bench.metrics[]? | select(.metric == "cpu-time")) as $m |
			[$v, .verdict, .reason, ($m.speedup * 1000 | round / 1000), ($m.ci_low * 1000 | round / 1000), ($m.ci_high * 1000 | round / 1000),
			 (if $m.ci_low <= 1 and $m.ci_high >= 1 then "covers-1" else "excludes-1" end),
			 ((.bench.layout.spread // 0) * 1000 | round / 10 | tostring + "%-spread"), ((.flags // []) | join(",")), (.bench.seconds | round | tostring + "s-bench"), ((.bench.layout.setup_seconds // 0) * 10 | round / 10 | tostring + "s-layout-builds"),
			 ((.bench.layout.relinked // 0) | tostring + "-relinked"), ((.bench.layout.cached // 0) | tostring + "-cached")] | @tsv'
	)
}

out=$work/verdicts.tsv
start=$(date +%s)
for v in sleep unused pad16 pad32 pad48; do
	s=0
	while [ "$s" -lt "$sessions" ]; do
		judge "$(fresh "$v-$s")" "$v" | tee -a "$out"
		s=$((s + 1))
	done
done
dir=$(fresh flood)
k=1
while [ "$k" -le "$flood" ]; do
	judge "$dir" "pad$((16 * k))" | sed 's/^pad[0-9]*/flood/' | tee -a "$out"
	k=$((k + 1))
done
judge "$(fresh honest)" honest | tee -a "$out"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), hogs $hogs, $(($(date +%s) - start)) s"
awk -F'\t' '{n[$1]++; if ($2 == "accepted") a[$1]++; if ($3 == "regressed") r[$1]++; if ($7 == "covers-1") c[$1]++}
	END {for (v in n) printf "%-8s %2d verdicts: %d accepted, %d regressed, CI covers 1 in %d\n", v, n[v], a[v], r[v], c[v]}' "$out" | sort
