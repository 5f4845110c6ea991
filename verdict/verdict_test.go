package verdict

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

func TestMuchFasterIsAccepted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
	f.want(e, ledger.VerdictAccepted, ReasonImproved)
	st := e.Bench.Stat(workspace.MetricCPUTime)
	// A quarter of the walks: the work meter charges each run its start
	// as well as its declared steps, so the ratio is about 3, not 4.
	if st.CILow < 2 || st.P >= 0.05 {
		t.Errorf("a 4x cheaper workload measured %+v", st)
	}
	if len(e.Gates) != 3 {
		t.Errorf("gates: %+v", e.Gates)
	}
	if e.Environment.BaselineBinary["prog"] == "" || e.Environment.BaselineBinary["prog"] == e.Environment.CandidateBinary["prog"] {
		t.Errorf("binary fingerprint: %v vs %v", e.Environment.BaselineBinary, e.Environment.CandidateBinary)
	}
	if !strings.HasPrefix(e.Summary, "speedup ") || strings.Contains(e.Summary, "\n") {
		t.Errorf("summary %q", e.Summary)
	}
	// The baseline build is cached: a second verdict on the same pin reuses it.
	e2 := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 2")}), Options{})
	if !e2.Gates[0].Baseline.Cached {
		t.Error("the second verdict on the same pin rebuilt the baseline")
	}
}

func TestSlowerIsRegressed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 8")}), Options{})
	f.want(e, ledger.VerdictRejectedBench, ReasonRegressed)
}

func TestBrokenUnitTestIsRejectedGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("? 0 : 1", "? 1 : 0")}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if g := e.Gates[len(e.Gates)-1]; g.Name != "unit" || g.Candidate.ExitCode != 1 {
		t.Errorf("failed gate %+v", g)
	}
	if e.Bench != nil {
		t.Error("benchmarked a patch that failed a gate")
	}
}

func TestChangedOutputFailsEquivalence(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace(`printf("%llu\n", r)`, `printf("%llu\n", r + 1)`)}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	g := e.Gates[len(e.Gates)-1]
	if g.Name != "golden" || !strings.Contains(g.Message, "stdout differs") {
		t.Errorf("failed gate %+v", g)
	}
}

// A gate that hangs is killed at its timeout, together with a grandchild
// that left the process group with setsid.
func TestHangingGateIsKilledWithGrandchildren(t *testing.T) {
	f := newFixture(t, "ctarget", "c", cToml)
	marker := "hone-hang-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	hang := "setsid sh -c 'while :; do sleep 1; done # " + marker + "' &\nsleep 1000\n"
	start := time.Now()
	e := f.verdictOf(f.patch(map[string]func(string) string{"test.sh": func(string) string { return hang }}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if g := e.Gates[len(e.Gates)-1]; g.Name != "unit" || !g.Candidate.TimedOut {
		t.Errorf("failed gate %+v", g)
	}
	if time.Since(start) > 30*time.Second {
		t.Errorf("the verdict took %v", time.Since(start))
	}
	if n := testproc.Count(t, marker); n != 0 {
		t.Errorf("%d processes of the hanging gate survived it", n)
	}
}

func TestNetworkIsDeniedInGates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"test.sh": replace("--selftest", "--dial")}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	g := e.Gates[len(e.Gates)-1]
	if !strings.Contains(g.Candidate.OutputTail, "connect: Network is unreachable") {
		t.Errorf("gate output %q", g.Candidate.OutputTail)
	}
	if !e.Environment.NetworkDenied || e.Environment.Isolation != "full" {
		t.Errorf("isolation %q, network denied %v", e.Environment.Isolation, e.Environment.NetworkDenied)
	}
}

func TestCandidateBuildFailureIsRejectedGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("int main", "int main oops")}), Options{})
	f.want(e, ledger.VerdictRejectedGate, ReasonGateFailed)
	if g := e.Gates[0]; g.Name != "build" || g.Passed || !strings.Contains(g.Candidate.OutputTail, "error") {
		t.Errorf("build gate %+v", g.Candidate)
	}
}

// A gate already failing at the pin is the baseline's fault, not the patch's.
func TestGateBrokenAtPinIsError(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", strings.Replace(cToml, `run = "sh ./test.sh"`, `run = "false"`, 1))
	e := f.verdictOf(f.patch(map[string]func(string) string{"prog.c": replace("#define REPS 4", "#define REPS 1")}), Options{})
	f.want(e, ledger.VerdictError, ReasonBaseline)
}

// A faster Go patch that adds a goroutine needs a human.
func TestGoRiskSignalNeedsHumanReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "gotarget", "g", goToml)
	// The subject is the risk signal, not a cold build: the standard
	// library comes warm (gowarm).
	gowarm.SeedT(t, filepath.Join(f.ws.Root, ".git"))
	e := f.verdictOf(f.patch(map[string]func(string) string{"main.go": replace("const reps = 4", "const reps = 1\n\nfunc init() { done := make(chan bool); go func() { done <- true }(); <-done }")}), Options{})
	f.want(e, ledger.VerdictNeedsHumanReview, ReasonImproved)
	if len(e.RiskSignals) != 1 || e.RiskSignals[0] != "threads in targets/g/main.go" {
		t.Errorf("risk signals %v", e.RiskSignals)
	}
}
