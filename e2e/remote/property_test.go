package remote

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/hone-perf/hone/internal/tier"
)

// The remote's promises, checked by a stateful property test over a real
// bare server with hone's real pre-receive: random sequences of agent
// pushes (hone's own, and plain git pushes of random, replayed and empty
// commits and deletions to any ref under refs/hone/, refs/notes/,
// branches and tags, from two authenticated identities and none), runner
// rounds (some SIGKILLed part way), maintainer pushes (a signed change of
// main, an inbox's retirement) and pulls. After every step:
//   - no honest pull, push or runner round failed (each action asserts it);
//   - an honest clone's pull still works;
//   - at most one trusted verdict per proposal, other than error;
//   - every trusted verdict is one the runner judged here;
//   - the queue serves each authenticated identity in turn: the runner
//     never judges an identity's proposal while another identity's
//     proposal waits that the server's branch held before the first
//     identity was last served, unless that other identity was served
//     since (a proposal a killed round had claimed is resumed first, out
//     of turn);
//
// and after every sequence a fresh clone's `hone ledger verify` passes.
//
// The default tier's budget is small (a busy 2-core machine);
// TestMeasureTheRemoteKeepsItsPromises runs a long one. -rapid.checks and
// -rapid.steps on the command line win over both.
func TestTheRemoteKeepsItsPromisesAgainstAnyPush(t *testing.T) {
	keepsPromises(t, 4, 10)
}

// The long budget, in the measurement tier, which runs on an otherwise
// idle machine with time to spare: nothing here is timed.
func TestMeasureTheRemoteKeepsItsPromises(t *testing.T) {
	tier.Measure(t, "nothing is timed or measured against a threshold: the invariants hold whatever each verdict decides, so the clock's noise cannot fail it")
	keepsPromises(t, 40, 30)
}

// keepsPromises runs checks sequences of up to steps steps each.
func keepsPromises(t *testing.T, checks, steps int) {
	setDefault := func(name string, v any) {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		if !set {
			if err := flag.Set(name, fmt.Sprint(v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	setDefault("rapid.checks", checks)
	setDefault("rapid.steps", steps)
	// A failure prints the seed that replays it (-rapid.seed); no fail
	// file is left in the source tree.
	setDefault("rapid.nofailfile", true)
	if f := flag.Lookup("rapid.shrinktime"); f != nil && f.Value.String() == f.DefValue {
		if err := flag.Set("rapid.shrinktime", "2m"); err != nil {
			t.Fatal(err)
		}
	}
	keys := newKeys(t)
	n := 0
	sequences, total := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		m := newModel(rt, keys, filepath.Join(keys.dir, fmt.Sprint(n)))
		rt.Repeat(rapid.StateMachineActions(m))
		m.freshCloneVerifies()
		sequences++
		total += m.steps
	})
	t.Logf("explored %d sequences, %d steps", sequences, total)
}

// model is one sequence's deployment and what the test knows of it.
type model struct {
	w       *world
	rt      *rapid.T
	clones  map[string]string // identity -> clone
	runner  string
	watcher string
	judged  map[string]bool // patch ids the runner reported judging
	steps   int
	// The queue's turns, as the model knows them: who proposed each patch
	// (the identity its Propose step pushed as, when that push was taken
	// at once), the step after which the server's branch first held it,
	// the step each identity was last served at, and the patches a killed
	// round claimed.
	proposer map[string]string
	arrived  map[string]int
	served   map[string]int
	resumed  map[string]bool
	read     map[string]bool // proposal paths of the server's branch already read
}

func newModel(rt *rapid.T, keys *world, dir string) *model {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		rt.Fatal(err)
	}
	w := &world{t: rt, dir: dir, hone: keys.hone, keys: keys.keys}
	w.seed("main", 4, "pusher = \"HONE_PUSHER\"\n")
	m := &model{w: w, rt: rt, clones: map[string]string{}, judged: map[string]bool{},
		proposer: map[string]string{}, arrived: map[string]int{}, served: map[string]int{}, resumed: map[string]bool{}, read: map[string]bool{}}
	for _, who := range []string{"agent", "honest"} {
		w.pusher = who
		m.clones[who] = w.clone(who, who)
	}
	w.pusher = "runner"
	m.runner = w.clone("runner", "runner")
	m.watcher = w.clone("watcher", "")
	return m
}

var bodies = []string{`puts("2");`, `puts("3");`, `puts("4");`, `puts("1"); puts("");`}

// Propose: an agent proposes one of a few patches (a second proposal of
// the same attempt it knows of is refused, exit 3), maybe without pulling
// first, and pushes: the push must work, or, where the server refused a
// proposal of this clone's for good (another agent's patch proposed first,
// a pin main moved past), withdraw it, and the next push must work.
func (m *model) Propose(rt *rapid.T) {
	m.steps++
	who := rapid.SampledFrom([]string{"agent", "honest"}).Draw(rt, "who")
	i := rapid.IntRange(0, len(bodies)-1).Draw(rt, "body")
	m.w.pusher = who
	dir := m.clones[who]
	diff := "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,3 +1,3 @@\n #include <stdio.h>\n #include <unistd.h>\n-int main(void) { puts(\"1\"); return 0; }\n+int main(void) { " + bodies[i] + " return 0; }\n"
	f := filepath.Join(m.w.dir, who+".diff")
	if err := os.WriteFile(f, []byte(diff), 0o644); err != nil {
		rt.Fatal(err)
	}
	if rapid.Bool().Draw(rt, "pull first") {
		m.w.must(dir, "hone", "ledger", "pull")
	}
	out, errOut, code := m.w.run(dir, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", fmt.Sprintf("body %d by %s", i, who), "--file", f)
	if code != 0 && code != 3 {
		rt.Fatalf("propose: exit %d\n%s%s", code, out, errOut)
	}
	// A push the server refuses for an entry of this clone's withdraws it
	// (exit 3, once); the push after it must work.
	_, errOut, pushed := m.w.run(dir, "hone", "ledger", "push")
	if id := strings.TrimSpace(out); code == 0 && pushed == 0 && m.proposer[id] == "" {
		m.proposer[id] = who
	}
	if code := pushed; code != 0 {
		if code != 3 || !strings.Contains(errOut, "withdrawn from later pushes") {
			rt.Fatalf("push: exit %d\n%s", code, errOut)
		}
		m.w.must(dir, "hone", "ledger", "push")
	}
}

// Raw: the agent pushes with plain git, as any agent with push access can:
// an empty commit on top of a ref of the server, a commit planting a file
// on top of one, another ref's commit replayed, or a deletion, to any ref.
// Whatever the server says, the invariants must hold after it.
func (m *model) Raw(rt *rapid.T) {
	m.steps++
	who := rapid.SampledFrom([]string{"agent", "mallory", ""}).Draw(rt, "pusher")
	m.w.pusher = who
	dir := m.clones["agent"]
	refs := m.serverRefs()
	names := make([]string, 0, len(refs))
	for r := range refs {
		names = append(names, r)
	}
	sort.Strings(names)
	targets := append([]string{
		"refs/heads/hone/ledger", "refs/notes/hone", "refs/notes/other", "refs/heads/x", "refs/tags/t",
		"refs/hone/junk", "refs/hone/runners/runner0", "refs/hone/inbox/a1a1a1a1a1a1a1a1/ledger",
		"refs/hone/inbox/a2a2a2a2a2a2a2a2/ledger", "refs/hone/inbox/a2a2a2a2a2a2a2a2/notes",
	}, names...)
	target := rapid.SampledFrom(targets).Draw(rt, "target")
	kind := rapid.SampledFrom([]string{"empty", "plant", "replay", "delete"}).Draw(rt, "kind")
	var src string
	switch kind {
	case "delete":
	case "replay":
		if len(names) == 0 {
			return
		}
		m.w.must(dir, "git", "fetch", "-q", "origin", "+"+rapid.SampledFrom(names).Draw(rt, "from")+":refs/attack/src")
		src = "refs/attack/src"
	default:
		base := ""
		if len(names) > 0 {
			m.w.must(dir, "git", "fetch", "-q", "origin", "+"+rapid.SampledFrom(names).Draw(rt, "base")+":refs/attack/base")
			base = "refs/attack/base"
		}
		src = m.plantOn(rt, dir, base, kind)
	}
	m.w.run(dir, "git", "push", "--no-verify", "origin", src+":"+target)
}

// plantOn makes a commit on top of base (none: a root commit): empty, or
// with one file added whose path and bytes are drawn: an attachment or a
// copy beside an entry the ledger holds, an entry at a fixed id, or junk.
func (m *model) plantOn(rt *rapid.T, dir, base, kind string) string {
	w := m.w
	idx := filepath.Join(w.dir, "raw-index")
	os.Remove(idx)
	env := func(args ...string) []string { return append([]string{"env", "GIT_INDEX_FILE=" + idx}, args...) }
	parent := []string{}
	if base != "" {
		if _, _, code := w.run(dir, "git", "rev-parse", "--verify", "-q", base+"^{commit}"); code != 0 {
			return base
		}
		w.must(dir, env("git", "read-tree", base)...)
		parent = []string{"-p", base}
	} else {
		w.must(dir, env("git", "read-tree", "--empty")...)
	}
	if kind == "plant" {
		var entries []string
		for _, p := range strings.Fields(w.must(dir, env("git", "ls-files")...)) {
			if strings.HasSuffix(p, ".toml") {
				entries = append(entries, p)
			}
		}
		shapes := []string{"profile", "junk"}
		if len(entries) > 0 {
			shapes = append(shapes, "attachment", "rewrite")
		}
		bytes := fmt.Sprint(rapid.IntRange(0, 3).Draw(rt, "bytes"))
		var path, body string
		switch rapid.SampledFrom(shapes).Draw(rt, "shape") {
		case "attachment":
			path = strings.TrimSuffix(rapid.SampledFrom(entries).Draw(rt, "entry"), ".toml") + ".note"
			body = bytes
		case "rewrite":
			path = rapid.SampledFrom(entries).Draw(rt, "entry")
			body = strings.Replace(w.must(dir, env("git", "cat-file", "blob", ":"+path)...), "\n", "\n# "+bytes+"\n", 1)
		case "profile":
			id := "00e8d4a51000000000000000000000aa"
			path = "c/profile/aa/" + id + ".toml"
			body = "schema = 1\nid = \"" + id + "\"\nkind = \"profile\"\ntarget = \"c\"\ncreated = 2001-09-09T01:46:40Z\nhotspot = \"h" + bytes + "\"\n"
		default:
			path, body = "junk/"+bytes, bytes
		}
		f := filepath.Join(w.dir, "raw-blob")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			rt.Fatal(err)
		}
		blob := strings.TrimSpace(w.must(dir, "git", "hash-object", "-w", f))
		w.must(dir, env("git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)...)
	}
	tree := strings.TrimSpace(w.must(dir, env("git", "write-tree")...))
	return strings.TrimSpace(w.must(dir, append([]string{"git", "commit-tree", tree, "-m", "raw"}, parent...)...))
}

var judgedLine = regexp.MustCompile(`(?m)^([0-9a-f]{16})\s+(accepted|needs-human-review|rejected-gate|rejected-bench|error|cancelled)\b`)

// Runner: one round of `hone runner --once`, which must work whatever the
// agents pushed.
func (m *model) Runner(rt *rapid.T) {
	m.steps++
	m.w.pusher = "runner"
	out := m.w.must(m.runner, "hone", "runner", "--once", "--name", "runner0")
	for _, g := range judgedLine.FindAllStringSubmatch(out, -1) {
		m.inTurn(rt, g[1])
		m.judged[g[1]] = true
		if who := m.proposer[g[1]]; who != "" {
			m.served[who] = m.steps
		}
	}
}

// inTurn fails when the runner judged patch out of its proposer's turn:
// its proposer was served before, and another identity's proposal waits
// that the server's branch held before that, its identity not served
// since. Both are due in the order of their last service or arrival, and
// the other's came first.
func (m *model) inTurn(rt *rapid.T, patch string) {
	a := m.proposer[patch]
	prev, ok := m.served[a]
	if a == "" || !ok || m.resumed[patch] {
		return
	}
	for q, at := range m.arrived {
		b := m.proposer[q]
		if q == patch || b == "" || b == a || m.judged[q] || m.resumed[q] || at >= prev {
			continue
		}
		if last, ok := m.served[b]; ok && last > prev {
			continue
		}
		rt.Fatalf("step %d: the runner judged %s of %s, served at step %d, while %s of %s waited on the branch since step %d", m.steps, patch, a, prev, q, b, at)
	}
}

// claimedLine is a runner's progress line on claiming a proposal.
var claimedLine = regexp.MustCompile(`claimed ([0-9a-f]{16})`)

// Kill: a runner round is SIGKILLed at a point drawn from its progress
// (after its fetch, its claim, or its build); the runner's next rounds
// must still work, whatever it left behind.
func (m *model) Kill(rt *rapid.T) {
	m.steps++
	at := rapid.SampledFrom([]string{"fetch", "claimed", "build"}).Draw(rt, "at")
	m.w.pusher = "runner"
	cmd := exec.Command(m.w.hone, "runner", "--once", "--name", "runner0")
	cmd.Dir = m.runner
	cmd.Env = m.w.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		rt.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		rt.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		// The claim outlives the round: the runner resumes it first.
		if g := claimedLine.FindStringSubmatch(sc.Text()); g != nil {
			m.resumed[g[1]] = true
		}
		if strings.Contains(sc.Text(), at) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	cmd.Wait()
}

// Pull: an honest clone pulls, which must work.
func (m *model) Pull(rt *rapid.T) {
	m.steps++
	who := rapid.SampledFrom([]string{"agent", "honest", "runner"}).Draw(rt, "who")
	dir := m.runner
	if who != "runner" {
		dir = m.clones[who]
	}
	m.w.must(dir, "hone", "ledger", "pull")
}

// Maintain: the maintainer pushes a signed change of main, or retires an
// agent's inbox; either must be taken.
func (m *model) Maintain(rt *rapid.T) {
	m.steps++
	w := m.w
	w.pusher = "maintainer"
	dir := filepath.Join(w.dir, "maintainer")
	if _, err := os.Stat(dir); err != nil {
		dir = w.clone("maintainer", "")
		w.must(dir, "git", "config", "gpg.format", "ssh")
		w.must(dir, "git", "config", "user.signingkey", w.keys["maintainer"])
	}
	w.must(dir, "git", "pull", "-q", "--ff-only", "origin", "main")
	// Retirement is for inboxes no honest writer uses: a retired inbox
	// is never written again.
	honest := map[string]bool{}
	for _, d := range []string{m.clones["agent"], m.clones["honest"], m.runner} {
		if out, _, code := w.run(d, "git", "config", "--get", "hone.writerid"); code == 0 {
			honest[strings.TrimSpace(out)] = true
		}
	}
	var inboxes []string
	for r := range m.serverRefs() {
		if wid, ok := strings.CutPrefix(r, "refs/hone/inbox/"); ok && strings.HasSuffix(wid, "/ledger") && !honest[strings.TrimSuffix(wid, "/ledger")] {
			inboxes = append(inboxes, strings.TrimSuffix(wid, "/ledger"))
		}
	}
	sort.Strings(inboxes)
	if len(inboxes) > 0 && rapid.Bool().Draw(rt, "retire") {
		wid := rapid.SampledFrom(inboxes).Draw(rt, "inbox")
		tree := strings.TrimSpace(w.must(dir, "git", "rev-parse", "HEAD^{tree}"))
		c := strings.TrimSpace(w.must(dir, "git", "commit-tree", "-S", tree, "-m", "retire "+wid))
		specs := []string{"push", "-q", "--atomic", "origin", c + ":refs/hone/retired/" + wid, ":refs/hone/inbox/" + wid + "/ledger"}
		if _, ok := m.serverRefs()["refs/hone/inbox/"+wid+"/notes"]; ok {
			specs = append(specs, ":refs/hone/inbox/"+wid+"/notes")
		}
		w.must(dir, append([]string{"git"}, specs...)...)
		return
	}
	w.write(dir, map[string]string{"README": fmt.Sprint(m.steps)})
	w.must(dir, "git", "add", "README")
	w.must(dir, "git", "commit", "-q", "-S", "-m", "readme")
	w.must(dir, "git", "push", "-q", "origin", "main")
}

// Check is the invariants after every step.
func (m *model) Check(rt *rapid.T) {
	w := m.w
	w.pusher = ""
	m.arrivals(rt)
	w.must(m.watcher, "hone", "ledger", "pull")
	var rows []struct {
		PatchID string `json:"patch_id"`
		Verdict string `json:"verdict"`
		Signer  string `json:"signer"`
	}
	if err := json.Unmarshal([]byte(w.must(m.watcher, "hone", "ledger", "list", "--kind", "verdict", "--json")), &rows); err != nil {
		rt.Fatal(err)
	}
	trusted := map[string]int{}
	for _, r := range rows {
		if r.Signer != "runner@ci" || r.Verdict == "error" {
			continue
		}
		trusted[r.PatchID]++
		if trusted[r.PatchID] > 1 {
			rt.Fatalf("patch %s has %d trusted verdicts: %+v", r.PatchID, trusted[r.PatchID], rows)
		}
		if !m.judged[r.PatchID] {
			rt.Fatalf("patch %s has a trusted verdict the runner never reported judging: %+v (judged: %v)", r.PatchID, r, m.judged)
		}
	}
}

// arrivals notes the proposals the server's branch holds that it did not
// at the last check: they arrived in this step.
func (m *model) arrivals(rt *rapid.T) {
	srv := m.w.server
	if _, _, code := m.w.run(srv, "git", "rev-parse", "-q", "--verify", "refs/heads/hone/ledger"); code != 0 {
		return
	}
	for _, p := range strings.Fields(m.w.must(srv, "git", "ls-tree", "-r", "--name-only", "refs/heads/hone/ledger")) {
		if !strings.Contains(p, "/proposal/") || !strings.HasSuffix(p, ".toml") || m.read[p] {
			continue
		}
		m.read[p] = true
		g := patchIDField.FindStringSubmatch(m.w.must(srv, "git", "cat-file", "blob", "refs/heads/hone/ledger:"+p))
		if g == nil {
			rt.Fatalf("proposal %s on the server's branch names no patch", p)
		}
		if _, ok := m.arrived[g[1]]; !ok {
			m.arrived[g[1]] = m.steps
		}
	}
}

// patchIDField is an entry's patch_id line.
var patchIDField = regexp.MustCompile(`(?m)^patch_id = "([0-9a-f]+)"`)

// freshCloneVerifies ends a sequence: a clone made now verifies.
func (m *model) freshCloneVerifies() {
	w := m.w
	w.pusher = ""
	dir := w.clone(fmt.Sprintf("fresh-%d", m.steps), "")
	w.must(dir, "hone", "ledger", "verify")
}

// serverRefs lists the server's refs by name.
func (m *model) serverRefs() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(m.w.serverRefs()), "\n") {
		if ref, h, ok := strings.Cut(line, " "); ok {
			out[ref] = h
		}
	}
	return out
}
