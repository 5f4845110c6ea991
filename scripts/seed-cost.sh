#!/bin/sh
# What per-pair seeds cost a verdict: hone built at the commit before they
# landed (BEFORE, the main line before the decide merge) and at AFTER judge
# the same sample patch of the C sample target (verdict/testdata/ctarget),
# N times each, interleaved (before, after, after, before, ...), each
# verdict in a fresh repository. AFTER judges with [bench] layouts = 1
# (LAYOUTS), so that the layouts the sides are built in since then do not
# weigh in; the sequential design and slow_factor came with the same merge
# and do.
#
#   scripts/seed-cost.sh [N] [PATCH]
#
# PATCH is the new REPS of the pin's 4 walks: 1 (4x, the default) or 3
# (1.33x). Prints one line per verdict (version, wall seconds, pairs,
# verdict, speedup), then per version the median wall and pairs, the ratio
# after/before, and the load average before and after. About 40 s a
# verdict on a quiet 2-core machine: N=10 takes some 15 minutes. Needs go,
# cc, bwrap, git and jq.
set -eu
n=${1:-10}
reps=${2:-1}
before=${BEFORE:-a7c1e09^1}
after=${AFTER:-HEAD}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1

for v in before after; do
	eval rev=\$$v
	mkdir "$work/src-$v"
	git -C "$here" archive "$rev" | tar -x -C "$work/src-$v"
	(cd "$work/src-$v" && CGO_ENABLED=0 go build -trimpath -o "$work/hone-$v" ./cmd/hone)
done

# fresh VERSION I makes a repository with the pin and prints its path.
fresh() {
	dir=$work/repo-$1-$2
	mkdir -p "$dir/targets/c"
	cp "$here/verdict/testdata/ctarget/prog.c" "$here/verdict/testdata/ctarget/test.sh" "$dir/targets/c/"
	layouts=
	[ "$1" = after ] && layouts="layouts = ${LAYOUTS:-1}"
	cat > "$dir/hone.toml" <<TOML
[bench]
pairs = 5
max_pairs = 10
$layouts

[targets.c]
build = "cc -O2 -g -o \$HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "unit"
  run = "sh ./test.sh"

  [[targets.c.gates]]
  name = "golden"
  run = "\$HONE_OUT/prog {seed}"
  equivalence = true

  [targets.c.bench]
  run = "\$HONE_OUT/prog {seed}"
TOML
	(cd "$dir" && git init -q -b main . && git add -A && git commit -q -m pin)
	echo "$dir"
}

# judge VERSION I prints: version wall pairs verdict speedup.
judge() {
	dir=$(fresh "$1" "$2")
	hone=$work/hone-$1
	sed "s/#define REPS 4/#define REPS $reps/" "$dir/targets/c/prog.c" > "$work/prog.c"
	cp "$work/prog.c" "$dir/targets/c/prog.c"
	(cd "$dir" && git diff > "$work/patch.diff" && git checkout -q -- .)
	id=$(cd "$dir" && "$hone" patch propose c --hotspot walk --class 1 --hypothesis "fewer walks" --file "$work/patch.diff" --json | jq -r .patch_id)
	start=$(date +%s.%N)
	(cd "$dir" && "$hone" verdict --json "$id" > "$work/verdict.json")
	end=$(date +%s.%N)
	printf '%s %.1f %s %s %.2f\n' "$1" "$(echo "$end - $start" | bc)" \
		"$(jq -r '.bench.pairs // 0' "$work/verdict.json")" "$(jq -r .verdict "$work/verdict.json")" "$(jq -r '.speedup // 0' "$work/verdict.json")"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
: > "$work/lines"
while [ "$i" -lt "$n" ]; do
	if [ $((i % 2)) -eq 0 ]; then order="before after"; else order="after before"; fi
	for v in $order; do
		judge "$v" "$i" | tee -a "$work/lines"
	done
	i=$((i + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for v in before after; do
	w=$(awk -v v="$v" '$1 == v {print $2}' "$work/lines" | median)
	p=$(awk -v v="$v" '$1 == v {print $3}' "$work/lines" | median)
	echo "$v: median wall ${w}s, median pairs $p"
	eval "w_$v=$w p_$v=$p"
done
echo "ratio after/before: wall $(echo "scale=2; $w_after / $w_before" | bc), pairs $(echo "scale=2; $p_after / $p_before" | bc)"
