package soundness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// A test build's verdict is the declared work's: four walks against one
// is (1e6 + 12e6) / (1e6 + 3e6) = 3.25 units exactly, in every pair, so
// the interval is that point and the decision comes at the same look on
// an idle machine and a loaded one alike (the second: at four pairs, four
// faster ones are not yet past the first look's level); a change that
// declares the same work is no change at all. Both entries say they were
// measured so.
func TestTestBuildDecidesByDeclaredWork(t *testing.T) {
	w := newWorld(t)
	fast := w.judge("one walk is enough", "#define REPS 4", "#define REPS 1")
	st := fast.Bench.Stat(fast.Bench.Metric)
	if fast.Verdict != ledger.VerdictAccepted || st == nil || st.CILow != 3.25 || st.CIHigh != 3.25 || fast.Bench.Pairs != 8 {
		t.Fatalf("one walk of four: %s at %+v over %d pairs; want accepted at exactly 3.25 after 8 pairs", fast.Verdict, st, fast.Bench.Pairs)
	}
	same := w.judge("a variable changes nothing", "static unsigned long long work;", "static unsigned long long work;\nstatic volatile int unused = 1;")
	if same.Verdict != ledger.VerdictRejectedBench || same.Speedup != 1 || same.Bench == nil {
		t.Fatalf("an unused variable: %s at %.3fx; want rejected-bench, measured at 1x", same.Verdict, same.Speedup)
	}
	for _, e := range []*verdict.Entry{fast, same} {
		if !e.HasFlag(ledger.FlagTestMeter) {
			t.Errorf("verdict %s lacks the %s flag: %v", e.ID, ledger.FlagTestMeter, e.Flags)
		}
	}
}

// A release build takes no verdict the work meter made: `ledger verify`
// reports the entry as malformed, and a server whose hook is a release
// hone refuses the ledger branch that carries it.
func TestReleaseBuildRefusesTheTestMetersVerdicts(t *testing.T) {
	w := newWorld(t)
	e := w.judge("one walk is enough", "#define REPS 4", "#define REPS 1")
	release := e2e.ReleaseHone(t)

	out, errOut, code := w.exec(w.dir, release, "ledger", "verify")
	if code == 0 || !strings.Contains(out+errOut, "test meter") || !strings.Contains(out+errOut, e.ID) {
		t.Errorf("release ledger verify: exit %d\n%s%s\nwant a failure naming entry %s and the test meter", code, out, errOut, e.ID)
	}
	if _, _, code := w.exec(w.dir, w.hone, "ledger", "verify"); code != 0 {
		t.Errorf("the test build's own ledger verify failed (exit %d): it made the entry", code)
	}

	server := filepath.Join(t.TempDir(), "server.git")
	w.run(w.dir, "git", "init", "-q", "--bare", "-b", "main", server)
	w.run(w.dir, "git", "push", "-q", server, "main")
	w.run(server, release, "hooks", "install", "--server")
	// Everything hone ledger push would send, so that the entry is the
	// one thing the hook can object to.
	out, errOut, code = w.exec(w.dir, "git", "push", "--atomic", server, "hone/ledger", "refs/hone/patches/*:refs/hone/patches/*", "refs/notes/hone")
	if code == 0 || !strings.Contains(errOut, "test meter") {
		t.Errorf("a push of the ledger branch to a release hone's server: exit %d\n%s%s\nwant it refused, naming the test meter", code, out, errOut)
	}
}

// The release script cannot make a test build.
func TestReleaseScriptRefusesTheTestMeterTag(t *testing.T) {
	root := moduleRoot(t)
	cmd := exec.Command("sh", "scripts/build.sh", filepath.Join(t.TempDir(), "hone"), "-tags", "hone_testmeter")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "hone_testmeter") {
		t.Errorf("scripts/build.sh -tags hone_testmeter: %v\n%s\nwant exit 2 naming the tag", err, out)
	}
	cmd = exec.Command("sh", "scripts/build.sh", filepath.Join(t.TempDir(), "hone"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-tags=hone_testmeter")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("scripts/build.sh with GOFLAGS=-tags=hone_testmeter built a release:\n%s", out)
	}
}

// moduleRoot is the module's root folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
