#!/bin/sh
# Figures for the runner fleet, over a local bare remote whose pre-receive
# runs hone (as in e2e/fleet):
#
#   scripts/fleet-bench.sh writers [CLONES] [EACH]
#     CLONES agent clones (default 64) each propose EACH patches (default 2),
#     all at once, running `hone ledger push` after every proposal. Prints
#     the pushes that gave up, the entries on the remote (the branch after
#     one more fold, and the union of the inboxes) and the wall time.
#
#   scripts/fleet-bench.sh runners [PROPOSALS]
#     For 1, 2 and 3 runners: one agent pushes PROPOSALS patches (default 9)
#     at once; the runners judge them. Prints, per runner count, the median
#     and largest time from the push to a verdict's arrival on the remote,
#     and runner utilisation (time spent judging / runners x wall time), with
#     ratios to the one-runner figures, since the machine is shared.
set -eu
cd "$(dirname "$0")/.."
mode=${1:-writers}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scripts/build.sh "$dir/hone" >/dev/null
hone=$dir/hone
export HOME="$dir/home" GIT_CONFIG_NOSYSTEM=1 NO_COLOR=1
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@hone.invalid

# setup N: a server trusting N runner keys, its seed pushed, the hook in place.
setup() {
	rm -rf "$dir/server.git" "$dir/seed" "$dir"/clone-* "$dir"/runner-*
	git init -q --bare -b main "$dir/server.git"
	git init -q -b main "$dir/seed"
	mkdir -p "$dir/seed/targets/c" "$dir/seed/.hone"
	: >"$dir/seed/.hone/allowed_signers"
	i=0
	while [ "$i" -lt "$1" ]; do
		[ -f "$dir/key$i" ] || ssh-keygen -q -t ed25519 -N "" -C "runner$i" -f "$dir/key$i"
		echo "runner$i@bench $(cat "$dir/key$i.pub")" >>"$dir/seed/.hone/allowed_signers"
		i=$((i + 1))
	done
	printf '#include <stdio.h>\nint main(void) { puts("1"); return 0; }\n' >"$dir/seed/targets/c/prog.c"
	cat >"$dir/seed/hone.toml" <<'EOF'
[ledger]
allowed_signers = ".hone/allowed_signers"

[bench]
pairs = 2
max_pairs = 2

[targets.c]
build = "cc -O1 -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog"
EOF
	git -C "$dir/seed" add -A
	git -C "$dir/seed" commit -q -m pin
	git -C "$dir/seed" push -q "$dir/server.git" main
	printf '#!/bin/sh\nexec %s guard pre-receive\n' "$hone" >"$dir/server.git/hooks/pre-receive"
	chmod +x "$dir/server.git/hooks/pre-receive"
}

# propose DIR TAG: a patch that keeps the output, distinct per TAG.
propose() {
	printf 'diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts("1"); return 0; }\n+int main(void) { /* %s */ puts("1"); return 0; }\n' "$2" >"$1/.git/p.diff"
	(cd "$1" && "$hone" patch propose c --hotspot main --class 1 --hypothesis "idea $2" --file .git/p.diff >/dev/null)
}

now() { date +%s.%N; }

writers() {
	clones=${1:-64} each=${2:-2}
	setup 0
	i=0
	while [ "$i" -lt "$clones" ]; do
		git clone -q "$dir/server.git" "$dir/clone-$i"
		i=$((i + 1))
	done
	start=$(now)
	i=0
	while [ "$i" -lt "$clones" ]; do
		(
			n=0
			while [ "$n" -lt "$each" ]; do
				propose "$dir/clone-$i" "w$i-$n"
				(cd "$dir/clone-$i" && "$hone" ledger push >/dev/null 2>>"$dir/gave-up") || echo x >>"$dir/failed"
				n=$((n + 1))
			done
		) &
		i=$((i + 1))
	done
	wait
	end=$(now)
	git clone -q "$dir/server.git" "$dir/clone-last"
	(cd "$dir/clone-last" && "$hone" ledger push >/dev/null)
	onBranch=$(git -C "$dir/server.git" ls-tree -r --name-only hone/ledger | grep -c '/proposal/.*\.toml$' || true)
	inLast=$(cd "$dir/clone-last" && "$hone" ledger list --kind proposal --json | jq length)
	failed=$( [ -f "$dir/failed" ] && wc -l <"$dir/failed" || echo 0)
	echo "writers: $clones clones x $each proposals, pushing after each, all at once"
	echo "  pushes that gave up: $failed of $((clones * each))"
	echo "  proposals on the remote: $inLast of $((clones * each)) (union of branch and inboxes), $onBranch on hone/ledger after one more push"
	echo "  wall time: $(echo "$end - $start" | bc) s; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -s "$dir/gave-up" ]; then
		echo "  why pushes gave up (first 5 distinct):"
		sort "$dir/gave-up" | uniq -c | sort -rn | head -5
	fi
}

runners() {
	proposals=${1:-9}
	base_lat="" base_util=""
	for n in 1 2 3; do
		setup "$n"
		git clone -q "$dir/server.git" "$dir/clone-agent"
		p=0
		while [ "$p" -lt "$proposals" ]; do
			propose "$dir/clone-agent" "r$n-$p"
			p=$((p + 1))
		done
		(cd "$dir/clone-agent" && "$hone" ledger push >/dev/null)
		pushed=$(date -u +%s.%N)
		i=0
		while [ "$i" -lt "$n" ]; do
			git clone -q "$dir/server.git" "$dir/runner-$i"
			git -C "$dir/runner-$i" config hone.signingkey "$dir/key$i"
			(cd "$dir/runner-$i" && "$hone" runner --name "runner$i" --class bench --idle 3s --poll 300ms 2>/dev/null >/dev/null) &
			i=$((i + 1))
		done
		wait
		git clone -q "$dir/server.git" "$dir/clone-check"
		figures=$(cd "$dir/clone-check" && "$hone" ledger pull >/dev/null && "$hone" ledger list --all --json |
			jq -r --arg t0 "$pushed" --arg n "$n" '
				def secs: sub("\\.[0-9]+"; "") | sub("Z$"; "Z") | fromdateiso8601;
				def frac: (capture("\\.(?<f>[0-9]+)") // {f: "0"}).f | ("0." + .) | tonumber;
				def t: (.created | secs) + (.created | frac);
				(map(select(.kind == "verdict")) | map(t - ($t0 | tonumber)) | sort) as $lat
				| (map(select(.kind == "started")) | map({key: .patch_id, value: t}) | from_entries) as $start
				| (map(select(.kind == "verdict")) | map(t - $start[.patch_id]) | add) as $busy
				| ($lat | last) as $wall
				| "\($lat[($lat | length) / 2 | floor]) \($lat | last) \($busy / (($n | tonumber) * $wall))"')
		rm -rf "$dir/clone-agent" "$dir/clone-check"
		set -- $figures
		med=$1 max=$2 util=$3
		[ -n "$base_lat" ] || { base_lat=$med; base_util=$util; }
		printf 'runners=%d: push to verdict median %.1f s (x%.2f of 1 runner), last %.1f s; utilisation %.2f (x%.2f)\n' \
			"$n" "$med" "$(echo "$med / $base_lat" | bc -l)" "$max" "$util" "$(echo "$util / $base_util" | bc -l)"
	done
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

[ "$#" -gt 0 ] && shift
case $mode in
writers) writers "$@" ;;
runners) runners "$@" ;;
*) echo "usage: $0 writers [CLONES] [EACH] | runners [PROPOSALS]" >&2; exit 2 ;;
esac
