#!/usr/bin/env bash
# bench-worktree.sh: does `hone worktree enter` cost at most 1.2x a plain
# `git worktree add` of the same tree?
#
# Usage: scripts/bench-worktree.sh [HONE_BINARY] [RUNS] [FILES]
#   HONE_BINARY  default /tmp/hone-wt (scripts/build.sh /tmp/hone-wt)
#   RUNS         timed pairs, default 30
#   FILES        files in the benchmark tree, default 2000 (in 40 directories)
#
# Each pair times, in random order, `git worktree add -b B PATH <commit>` and
# `hone worktree enter --name N --base head` (a fresh HONE_SESSION each time,
# so no exit is needed in between) from the same commit into the same directory
# (.sema-worktrees/); both worktrees are then removed, untimed. It prints the
# median wall time of each and their ratio, and exits 1 above 1.2.
set -euo pipefail

hone=${1:-/tmp/hone-wt}
runs=${2:-30}
files=${3:-2000}
[ -x "$hone" ] || { echo "no hone binary at $hone; scripts/build.sh $hone" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@hone.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@hone.invalid
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

repo=$work/repo
git init -q -b main "$repo"
for ((d = 0; d < 40; d++)); do
	mkdir -p "$repo/src/d$d"
	for ((f = 0; f < files / 40; f++)); do
		printf 'package d%d\n\n// file %d of directory %d\nfunc F%d() int { return %d }\n' "$d" "$f" "$d" "$f" "$f" >"$repo/src/d$d/f$f.go"
	done
done
printf '/.sema-worktrees/\n' >"$repo/.gitignore"
git -C "$repo" add -A
git -C "$repo" commit -q -m tree
commit=$(git -C "$repo" rev-parse HEAD)
cd "$repo"

now() { date +%s%N; }
git_ns=() hone_ns=()
time_git() {
	local t0 t1
	t0=$(now)
	git worktree add -q -b "plain-$1" "$repo/.sema-worktrees/plain-$1" "$commit"
	t1=$(now)
	git_ns+=($((t1 - t0)))
	git worktree remove --force "$repo/.sema-worktrees/plain-$1"
	git branch -q -D "plain-$1"
}
time_hone() {
	local t0 t1
	t0=$(now)
	HONE_SESSION="s$1" "$hone" worktree enter --name "h$1" --base head >/dev/null 2>&1
	t1=$(now)
	hone_ns+=($((t1 - t0)))
	HONE_SESSION="s$1" "$hone" worktree exit --action remove >/dev/null 2>&1
}

time_git warm
time_hone warm
for ((i = 0; i < runs; i++)); do
	if ((RANDOM % 2)); then
		time_git "$i"
		time_hone "$i"
	else
		time_hone "$i"
		time_git "$i"
	fi
done

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
g=$(median "${git_ns[@]}")
h=$(median "${hone_ns[@]}")
awk -v g="$g" -v h="$h" -v n="$runs" -v f="$files" 'BEGIN {
	printf "tree: %d files; %d interleaved pairs\n", f, n
	printf "git worktree add      median %.2f ms\n", g / 1e6
	printf "hone worktree enter   median %.2f ms\n", h / 1e6
	printf "ratio hone/git        %.3f (limit 1.2)\n", h / g
	exit (h / g <= 1.2) ? 0 : 1
}'
