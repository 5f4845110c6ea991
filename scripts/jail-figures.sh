#!/bin/sh
# jail-figures.sh: what the jail costs and how true its measurements are,
# through real hone verdicts:
#   - the jail's added wall time per run (bench seconds minus the commands'
#     own, per run),
#   - the cpu-time a no-op (/bin/true, and a static no-op program)
#     measures, beside the same program run directly,
#   - the speedup of a pair of programs whose true cpu-time ratio is 2.00
#     (the same loop run N and 2N times), beside an independent
#     interleaved measurement of the same two binaries,
#   - the speedup of the 4x sample patch of the verdict tests, likewise.
#
#   scripts/jail-figures.sh [HONE]
#
# HONE defaults to the hone on PATH. Needs cc, git and python3.
set -eu
hone=${1:-hone}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=hone GIT_AUTHOR_EMAIL=hone@invalid GIT_COMMITTER_NAME=hone GIT_COMMITTER_EMAIL=hone@invalid
cd "$work"
git init -q -b main .
mkdir -p targets/noop targets/static targets/two targets/four
echo "a no-op" > targets/noop/README
printf 'int main(void) { return 0; }\n' > targets/static/noop.c
# 2 x 60M steps: about 0.3 s of CPU, against a start-up of well under 1 ms.
sed 's/steps = 2500000/steps = 60000000/; s/#define REPS 4/#define REPS 2/' "$here/verdict/testdata/ctarget/prog.c" > targets/two/prog.c
cp "$here/verdict/testdata/ctarget/prog.c" targets/four/prog.c
cat > hone.toml <<'TOML'
[bench]
pairs = 10
max_pairs = 20

[targets.noop]
  [targets.noop.bench]
  run = "/bin/true"

[targets.static]
build = "cc -O2 -static -o $HONE_OUT/noop noop.c"
  [targets.static.bench]
  run = "$HONE_OUT/noop"

[targets.two]
build = "cc -O2 -o $HONE_OUT/prog prog.c"
  [targets.two.bench]
  run = "$HONE_OUT/prog"

[targets.four]
build = "cc -O2 -o $HONE_OUT/prog prog.c"
  [targets.four.bench]
  run = "$HONE_OUT/prog"
TOML
git add -A
git commit -q -m pin

# propose TARGET FILE SED-EXPR: a patch that edits one file of a target.
propose() {
	sed "$3" "targets/$1/$2" > "$work/new" && cp "$work/new" "targets/$1/$2"
	git diff > "$work/patch.diff"
	git checkout -q -- .
	"$hone" patch propose "$1" --hotspot walk --class 1 --hypothesis "$1: $3" --file "$work/patch.diff"
}

verdict() { "$hone" verdict "$1" --json > "$work/$2.json"; }

noop=$(propose noop README 's/no-op/no-op, again/')
verdict "$noop" noop
static=$(propose static noop.c 's/return 0;/return 0; \/\* again \*\//')
verdict "$static" static
two=$(propose two prog.c 's/#define REPS 2/#define REPS 1/')
verdict "$two" two
four=$(propose four prog.c 's/#define REPS 4/#define REPS 1/')
verdict "$four" four

# The same two binaries of each pair, built by hand and run directly,
# interleaved, 30 times each: the independent measurement.
for t in two four; do
	cc -O2 -o "$work/$t.base" "targets/$t/prog.c"
done
cc -O2 -static -o "$work/static.noop" targets/static/noop.c
sed 's/#define REPS 2/#define REPS 1/' targets/two/prog.c > "$work/two.c"
sed 's/#define REPS 4/#define REPS 1/' targets/four/prog.c > "$work/four.c"
cc -O2 -o "$work/two.cand" "$work/two.c"
cc -O2 -o "$work/four.cand" "$work/four.c"

python3 - "$work" <<'PY'
import json, os, statistics, subprocess, sys
work = sys.argv[1]

def cpu(path):
    # posix_spawn: the child's CPU time is the program's own, not a copy
    # of python's.
    pid = os.posix_spawn(path, [path], {}, file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, _, ru = os.wait4(pid, 0)
    return ru.ru_utime + ru.ru_stime

def direct(t):
    b, c = [], []
    for i in range(30):
        if i % 2:
            c.append(cpu(f"{work}/{t}.cand")); b.append(cpu(f"{work}/{t}.base"))
        else:
            b.append(cpu(f"{work}/{t}.base")); c.append(cpu(f"{work}/{t}.cand"))
    return statistics.median(b) / statistics.median(c)

def entry(name):
    return json.load(open(f"{work}/{name}.json"))

def metric(e, m):
    return next(x for x in e["bench"]["metrics"] if x["metric"] == m)

runs = 0
extra = 0.0
for name in ("noop", "static", "two", "four"):
    b = entry(name)["bench"]
    n = 2 * (b["pairs"] + b["warmup"])
    runs += n
    extra += b["seconds"] - b["command_seconds"]
print(f"isolation: {entry('noop')['environment']['isolation']}")
print(f"jail's added wall time per run: {1000 * extra / runs:.1f} ms (over {runs} runs)")
for name, path in (("noop", "/bin/true"), ("static", f"{work}/static.noop")):
    m = metric(entry(name), "cpu-time")
    direct_ms = statistics.median(cpu(path) for _ in range(40)) * 1000
    print(f"no-op {path.split('/')[-1]} cpu-time: baseline median {m['baseline_median'] * 1000:.3f} ms, "
          f"candidate {m['candidate_median'] * 1000:.3f} ms; run directly {direct_ms:.3f} ms")
for name, true in (("two", 2.0), ("four", None)):
    m = metric(entry(name), "cpu-time")
    d = direct(name)
    print(f"{name}: hone {m['speedup']:.3f}x [{m['ci_low']:.3f}, {m['ci_high']:.3f}] over {m['pairs']} pairs; "
          f"direct interleaved {d:.3f}x" + (f"; true {true:.2f}x" if true else ""))
PY
