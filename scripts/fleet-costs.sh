#!/bin/sh
# What a runner's claim step and an agent's push cost as the ledger grows,
# over a local bare remote whose pre-receive runs hone (as in e2e/fleet):
#
#   scripts/fleet-costs.sh [N...]        (default: 100 1000)
#   HONE_BIN=/path/to/hone scripts/fleet-costs.sh 100   (a build of your own)
#
# For each N, the remote's ledger is given N judged attempts (a proposal
# by one of 20 agents and a verdict signed by the runner's key, each in its
# own commit, with N patch refs), written straight into the remote with
# plain git, the hook bypassed only for that bulk write. Then, with the
# hook in place:
#   - claim step: a runner (`hone runner --poll 200ms`, cloned before the
#     bulk) meets one new proposal after another; each round's time from
#     its fetch to its claim is timed (the first round, which meets the
#     bulk, and the median of the next three);
#   - agent push: agents cloned before the bulk propose and run `hone
#     ledger push`: the first push after the bulk, then the median of three
#     pushes by agents that pulled just before proposing.
# Figures are wall seconds on whatever machine runs it; compare runs made
# side by side.
set -eu
cd "$(dirname "$0")/.."
sizes=${*:-100 1000}
dir=$(mktemp -d)
# FLEET_KEEP=1 keeps the remote and clones, to look at a round by hand.
[ -n "${FLEET_KEEP:-}" ] && echo "fleet-costs: keeping $dir" >&2 || trap 'rm -rf "$dir"' EXIT
# HONE_BIN: a hone built before (to compare two builds on one machine).
if [ -z "${HONE_BIN:-}" ]; then
	scripts/build.sh "$dir/hone" >/dev/null
	HONE_BIN=$dir/hone
fi
export HONE_BIN FLEET_DIR="$dir"
for n in $sizes; do
	python3 - "$n" <<'PY'
import os, re, secrets, statistics, subprocess, sys, threading, time

n = int(sys.argv[1])
hone = os.environ["HONE_BIN"]
top = os.path.join(os.environ["FLEET_DIR"], "n%d" % n)
os.makedirs(top)
env = dict(os.environ, HOME=os.path.join(top, "home"), GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1")
os.makedirs(env["HOME"])

def run(cwd, *args, stdin=None, extra=None):
    e = env if extra is None else dict(env, **extra)
    p = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, env=e)
    if p.returncode != 0:
        sys.exit("%s: %s\n%s%s" % (cwd, " ".join(args), p.stdout, p.stderr))
    return p.stdout

run(top, "git", "config", "--global", "user.name", "bench")
run(top, "git", "config", "--global", "user.email", "bench@hone.invalid")
key = os.path.join(top, "key")
run(top, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "runner", "-f", key)
server, seed = os.path.join(top, "server.git"), os.path.join(top, "seed")
run(top, "git", "init", "-q", "--bare", "-b", "main", server)
run(top, "git", "init", "-q", "-b", "main", seed)
os.makedirs(os.path.join(seed, "targets/c"))
os.makedirs(os.path.join(seed, ".hone"))
open(os.path.join(seed, ".hone/allowed_signers"), "w").write("runner@bench " + open(key + ".pub").read())
open(os.path.join(seed, "targets/c/prog.c"), "w").write('#include <stdio.h>\nint main(void) { puts("1"); return 0; }\n')
open(os.path.join(seed, "hone.toml"), "w").write('''[ledger]
allowed_signers = ".hone/allowed_signers"

[bench]
pairs = 2
max_pairs = 2
layouts = 1

[targets.c]
build = "cc -O1 -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog"
''')
run(seed, "git", "add", "-A")
run(seed, "git", "commit", "-q", "-m", "pin")
run(seed, "git", "push", "-q", server, "main")
hook = os.path.join(server, "hooks/pre-receive")
open(hook, "w").write("#!/bin/sh\nexec %s guard pre-receive\n" % hone)
os.chmod(hook, 0o755)

def clone(name, signing=False):
    d = os.path.join(top, name)
    run(top, "git", "clone", "-q", server, d)
    if signing:
        run(d, "git", "config", "hone.signingkey", key)
    return d

# propose: a patch distinct per number tag that keeps the output.
def propose(d, tag):
    diff = ('diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n'
            '@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts("1"); return 0; }\n'
            '+int main(void) { puts("1"); return %d - %d; }\n' % (tag, tag))
    p = os.path.join(d, ".git", "p.diff")
    open(p, "w").write(diff)
    return run(d, hone, "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", "idea %d" % tag, "--file", p).strip()

# One real attempt gives the templates every bulk entry copies.
agent, runner = clone("agent"), clone("runner", signing=True)
claimers = [clone("claimer%d" % k) for k in range(4)]
pushers = [clone("pusher%d" % k) for k in range(4)]
propose(agent, 1)
run(agent, hone, "ledger", "push")
run(runner, hone, "runner", "--once", "--class", "bench")
run(agent, hone, "ledger", "pull")
for d in claimers + pushers:
    run(d, hone, "ledger", "pull")
files = run(runner, "git", "ls-tree", "-r", "--name-only", "hone/ledger").split()
tmpl = {}
for f in files:
    m = re.match(r"c/(proposal|verdict)/../[0-9a-f]+\.toml$", f)
    if m:
        tmpl[m.group(1)] = run(runner, "git", "show", "hone/ledger:" + f)
pin = run(seed, "git", "rev-parse", "HEAD").strip()

# The bulk, written in the runner's clone and pushed with the hook aside.
bulk = clone("bulk", signing=True)
base = run(bulk, "git", "rev-parse", "origin/hone/ledger").strip()
imp = ["feature done\n"]
for i in range(n):
    body = '#include <stdio.h>\nint main(void) { /* bulk %d */ puts("1"); return 0; }\n' % i
    imp.append("commit refs/hone/patches/b%015x\ncommitter agent <a@x> 1700000000 +0000\ndata 5\nbulk\nfrom %s\n"
               "M 100644 inline targets/c/prog.c\ndata %d\n%s\n" % (i, pin, len(body.encode()), body))
imp.append("done\n")
run(bulk, "git", "fast-import", "--quiet", stdin="".join(imp))
idx = os.path.join(top, "bulk.index")
ix = dict(GIT_INDEX_FILE=idx)
run(bulk, "git", "read-tree", base, extra=ix)
tip = base
t0 = time.time() - 2 * n
def entry(kind, text, i, when):
    eid = "%012x%s" % (int(when * 1000), secrets.token_hex(10))
    pid = "b%015x" % i
    text = re.sub(r'(?m)^id = ".*"$', 'id = "%s"' % eid, text)
    text = re.sub(r'(?m)^patch_id = ".*"$', 'patch_id = "%s"' % pid, text)
    text = re.sub(r'(?m)^commit = ".*"$', 'commit = "%s"' % commits[pid], text)
    text = re.sub(r'(?m)^hypothesis = ".*"$', 'hypothesis = "bulk %d"' % i, text)
    text = re.sub(r'(?m)^attempt_key = ".*"$', 'attempt_key = "%s"' % secrets.token_hex(16), text)
    text = re.sub(r'(?m)^created = .*$', 'created = %s' % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when)), text)
    text = re.sub(r'(?m)^(started|logs) = .*\n', '', text)
    return eid, text
commits = dict(l.split()[::-1] for l in run(bulk, "git", "for-each-ref", "--format=%(objectname) %(refname:lstrip=3)", "refs/hone/patches/").splitlines() if l.split()[1].startswith("b"))
for i in range(n):
    for kind in ("proposal", "verdict"):
        eid, text = entry(kind, tmpl[kind], i, t0 + 2 * i + (kind == "verdict"))
        blob = run(bulk, "git", "hash-object", "-w", "--stdin", stdin=text).strip()
        run(bulk, "git", "update-index", "--add", "--cacheinfo", "100644,%s,c/%s/%s/%s.toml" % (blob, kind, eid[-2:], eid), extra=ix)
        tree = run(bulk, "git", "write-tree", extra=ix).strip()
        if kind == "proposal":
            who = "agent%d" % (i % 20)
            tip = run(bulk, "git", "commit-tree", tree, "-p", tip, "-m", "hone: proposal c " + eid,
                      extra=dict(GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL=who + "@x", GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL=who + "@x")).strip()
        else:
            tip = run(bulk, "git", "-c", "gpg.format=ssh", "-c", "user.signingkey=" + key, "commit-tree", "-S", tree, "-p", tip,
                      "-m", "hone: verdict c " + eid, extra=dict(GIT_COMMITTER_NAME="hone", GIT_COMMITTER_EMAIL="hone@localhost")).strip()
os.rename(hook, hook + ".off")
run(bulk, "git", "push", "-q", server, tip + ":refs/heads/hone/ledger", "refs/hone/patches/*:refs/hone/patches/*")
os.rename(hook + ".off", hook)

def median(xs):
    return statistics.median(xs) if xs else float("nan")

# Claim step: a runner loop meets one new proposal at a time.
rounds, claimed = [], threading.Event()
propose(claimers[0], 2)
run(claimers[0], hone, "ledger", "push")
proc = subprocess.Popen([hone, "runner", "--class", "bench", "--poll", "200ms"], cwd=runner, env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
def watch():
    start = None
    for line in proc.stderr:
        now = time.monotonic()
        if "runner: fetch " in line:
            start = now
        elif "runner: claimed " in line and start is not None:
            rounds.append(now - start)
            claimed.set()
threading.Thread(target=watch, daemon=True).start()
for k in range(4):
    if k > 0:
        propose(claimers[k], 2 + k)
        run(claimers[k], hone, "ledger", "push")
    if not claimed.wait(600):
        sys.exit("the runner claimed nothing in 10 minutes")
    claimed.clear()
    time.sleep(1)
proc.terminate()
proc.wait()

pushes = []
for k in range(4):
    if k > 0:
        run(pushers[k], hone, "ledger", "pull")
    propose(pushers[k], 10 + k)
    s = time.monotonic()
    run(pushers[k], hone, "ledger", "push")
    pushes.append(time.monotonic() - s)
entries = len([f for f in run(pushers[-1], "git", "ls-tree", "-r", "--name-only", "hone/ledger").split() if f.endswith(".toml")])
print("N=%d judged attempts (%d ledger entries at the end), %d patch refs" % (n, entries, n + 9))
print("  claim step (fetch to claim): first round after the bulk %.2f s, then median %.2f s (%s)" %
      (rounds[0], median(rounds[1:]), " ".join("%.2f" % r for r in rounds[1:])))
print("  agent push: first after the bulk %.2f s, then median %.2f s (%s)" %
      (pushes[0], median(pushes[1:]), " ".join("%.2f" % p for p in pushes[1:])))
print("  load average: %s" % open("/proc/loadavg").read().split(" ", 3)[:3])
PY
done
