package verdict

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// fixture is a temp workspace holding one sample target from testdata.
type fixture struct {
	t      *testing.T
	ws     *workspace.Workspace
	target *workspace.Target
	pin    string
}

// The samples' hone.toml set [bench] layouts = 1: code layout is not what
// these tests are about, and each layout costs a build per side and a
// warm-up pair in the machine's one bench turn. The tests whose subject is
// the layouts take fourLayouts(cToml).
const cToml = `[bench]
pairs = 5
max_pairs = 10
layouts = 1

[targets.c]
build = "cc -O2 -g -o $HONE_OUT/prog prog.c"

  [[targets.c.gates]]
  name = "unit"
  run = "sh ./test.sh"
  timeout = "2s"

  [[targets.c.gates]]
  name = "golden"
  run = "$HONE_OUT/prog {seed}"
  equivalence = true

  [targets.c.bench]
  run = "$HONE_OUT/prog {seed}"
`

const goToml = `[bench]
pairs = 5
max_pairs = 10
layouts = 1

[targets.g]
build = "go build -o $HONE_OUT/prog ."

  [[targets.g.gates]]
  name = "golden"
  run = "$HONE_OUT/prog {seed}"
  equivalence = true

  [targets.g.bench]
  run = "$HONE_OUT/prog {seed}"
`

// fourLayouts is toml judged over the default four layouts.
func fourLayouts(toml string) string {
	if !strings.Contains(toml, "layouts = 1\n") {
		panic("fourLayouts: no layouts = 1 in the toml")
	}
	return strings.Replace(toml, "layouts = 1\n", "", 1)
}

// newFixture copies testdata/<sample> to targets/<name> of a new repository
// with the given hone.toml and commits it as the pin, for a test that
// starts jails (builds, gates, a bench): the default tier and up. The
// samples declare the work each bench run does (hone-work: N on stderr),
// so that in the default tier, whose test binary has the work meter, a
// patch that does less work is faster by a fixed margin, not by the clock.
func newFixture(t *testing.T, sample, name, toml string) *fixture {
	t.Helper()
	tier.Jail(t)
	return newRepo(t, sample, name, toml)
}

// newRepo is newFixture for a test that stops before any jail (a refusal,
// a lookup, a stale pin): it stays in the unit tier.
func newRepo(t *testing.T, sample, name, toml string) *fixture {
	t.Helper()
	files := map[string]string{"hone.toml": toml}
	ents, err := os.ReadDir(filepath.Join("testdata", sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", sample, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["targets/"+name+"/"+strings.TrimSuffix(e.Name(), ".txt")] = string(b)
	}
	dir := testgit.NewRepo(t, files)
	pin := testgit.Git(t, dir, "rev-parse", "HEAD")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := ws.Target(name)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ws: ws, target: tgt, pin: pin}
}

// patch commits the pin with edits applied to files of the target (path ->
// function of the old content) using plumbing only, as hone patch would, and
// returns the commit.
func (f *fixture) patch(edits map[string]func(string) string) string {
	f.t.Helper()
	root := f.ws.Root
	scratch := testgit.Cmd{Dir: root, Env: []string{"GIT_INDEX_FILE=" + filepath.Join(f.t.TempDir(), "index")}}
	scratch.Git(f.t, "read-tree", f.pin)
	for file, edit := range edits {
		p := f.target.Path + "/" + file
		old := testgit.Git(f.t, root, "show", f.pin+":"+p)
		blob := testgit.Cmd{Dir: root, Stdin: edit(old + "\n")}.Git(f.t, "hash-object", "-w", "--stdin")
		scratch.Git(f.t, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := scratch.Git(f.t, "write-tree")
	return testgit.Git(f.t, root, "commit-tree", tree, "-p", f.pin, "-m", "patch")
}

// repin makes commit the pin: main moves there, as a maintainer's commit
// would move it, so the protected tip names it.
func (f *fixture) repin(commit string) {
	f.t.Helper()
	testgit.Git(f.t, f.ws.Root, "update-ref", "refs/heads/main", commit)
	f.pin = commit
}

func replace(old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			panic("fixture edit: " + old + " not found")
		}
		return strings.Replace(s, old, new, 1)
	}
}

// verdictOf evaluates a patch commit without the ledger, as Run would
// with a fresh input seed.
func (f *fixture) verdictOf(commit string, opts Options) *Entry {
	f.t.Helper()
	ctx := context.Background()
	prop := proposal{Common: ledger.Common{Kind: ledger.KindProposal, Target: f.target.Name, PatchID: "p-test", Commit: commit, Pin: f.pin}}
	gp, err := f.ws.GoalpostsAt(ctx, f.target.Name, f.pin)
	if err != nil {
		f.t.Fatal(err)
	}
	proto, _, err := protocol(gp.Target, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	seed, err := build.NewSeed()
	if err != nil {
		f.t.Fatal(err)
	}
	e, err := evaluate(ctx, f.ws, gp, prop, proto, seed, &prior{}, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	e.InputSeed = seed
	f.t.Logf("%s (%s): %s\n%s", e.Verdict, e.Reason, e.Summary, e.Detail)
	return e
}

func (f *fixture) want(e *Entry, verdict, reason string) {
	f.t.Helper()
	if e.Verdict != verdict || e.Reason != reason {
		f.t.Fatalf("verdict %s (%s), want %s (%s): %s", e.Verdict, e.Reason, verdict, reason, e.Detail)
	}
}

// propose stores commit as patch id the way hone patch propose does: the
// patch ref and a proposal entry.
func (f *fixture) propose(commit, id, hypothesis string) {
	f.t.Helper()
	testgit.Git(f.t, f.ws.Root, "update-ref", ledger.PatchRef(id), commit)
	prop := &ledger.Common{
		Kind: ledger.KindProposal, Target: f.target.Name, PatchID: id, Commit: commit, Pin: f.pin,
		Hotspot: "walk", Class: 1, Hypothesis: hypothesis,
		AttemptKey: ledger.AttemptKey(f.target.Name, "walk", 1, hypothesis),
	}
	if _, err := ledger.Open(f.ws).Append(context.Background(), prop); err != nil {
		f.t.Fatal(err)
	}
}
