package realgo

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// declaredWork is a test file added to the pin for the default tier, where
// hone's test build measures the work a run declares ("hone-work: N" on
// stderr) instead of the clock. Each bench run declares the set-up of the
// parent benchmarks it ran (the bytes their inputs fill) and a cost per
// iteration of each sub-benchmark it ran, the same on both sides, heavy
// enough that the command's 100 iterations already outweigh the set-up
// (sizing then costs a round, not eight: each run is a jail's start),
// except BenchmarkDigestBytes/100B: its iterations weigh nothing beside
// its set-up, as a loop whose set-up outweighs it at every count hone may
// run does to a meter. It does not change what the benchmarks do.
const declaredWork = `package xxhash

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if w := work(); w > 0 {
		fmt.Fprintf(os.Stderr, "hone-work: %d\n", w)
	}
	os.Exit(code)
}

func work() int {
	f := flag.Lookup("test.bench").Value.String()
	n, err := strconv.Atoi(strings.TrimSuffix(flag.Lookup("test.benchtime").Value.String(), "x"))
	if f == "" || err != nil {
		return 0
	}
	parts := strings.Split(f, "/")
	matches := func(i int, name string) bool {
		if len(parts) <= i {
			return true
		}
		ok, _ := regexp.MatchString(parts[i], name)
		return ok
	}
	sizes := map[string]int{"4B": 4, "100B": 100, "4KB": 4000, "10MB": 10000000}
	total := 0
	for parent, setUp := range map[string]int{"BenchmarkSum64": 10004104, "BenchmarkDigestBytes": 10004104, "BenchmarkSum64String": 625257, "BenchmarkDigestString": 625257} {
		if !matches(0, parent) {
			continue
		}
		total += setUp
		for name, size := range sizes {
			if matches(1, name) && parent+"/"+name != "BenchmarkDigestBytes/100B" {
				total += n * (2000000 + size/10)
			}
		}
	}
	return total
}
`

// hone init's configuration, with the equivalence gate it reads from the
// seeded test, on the real module:
// the build, its own tests and the golden gate run on both sides, every
// benchmark the harness names is sized and measured, and the one whose
// baseline cannot scale with its iterations is left out of the decision,
// named with its reason, rather than making the verdict an error; the
// verdict names the benchmarks that decided, and recomputes to itself.
func TestInitConfigJudgesTheRealModuleLeavingOutWhatCannotScale(t *testing.T) {
	w := newWorld(t, map[string]string{"hone_work_test.go": declaredWork})
	if !strings.Contains(w.toml, `format = "go"`) || !strings.Contains(w.toml, `name = "unit"`) {
		t.Fatalf("hone init wrote no Go bench or unit gate:\n%s", w.toml)
	}
	e := w.verdict(w.propose("Sum64String and WriteString inline", inlined))
	if e.Bench != nil {
		t.Logf("bench %.0fs, its commands %.0fs, %d pairs", e.Bench.Seconds, e.Bench.CommandSeconds, e.Bench.Pairs)
	}
	if e.Verdict == ledger.VerdictError || e.Verdict == ledger.VerdictRejectedGate || e.Bench == nil || !e.HasFlag(ledger.FlagTestMeter) {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	for _, g := range e.Gates {
		if !g.Passed || g.Name == "golden" && !g.Equivalence {
			t.Errorf("gate %+v", g)
		}
	}
	if len(e.Gates) != 3 {
		t.Errorf("gates %+v, want build, unit and golden", e.Gates)
	}
	var decided, left []string
	for _, r := range e.Bench.Benchmarks {
		switch {
		case r.Decides:
			decided = append(decided, r.Name)
		case r.Excluded != "":
			left = append(left, r.Name)
			if !strings.Contains(r.Excluded, "costs 1.00x") || !strings.Contains(r.Excluded, "not its loop") || r.BaselineScaling > 1.05 {
				t.Errorf("%s left out as %q, scaling %.2f", r.Name, r.Excluded, r.BaselineScaling)
			}
		}
	}
	if len(decided) != 15 || len(left) != 1 || left[0] != "BenchmarkDigestBytes/100B" {
		t.Errorf("decided by %v, left out %v", decided, left)
	}
	if !strings.Contains(e.Summary, "geomean of 15 benchmarks") || !strings.Contains(e.Summary, "left out: BenchmarkDigestBytes/100B") ||
		!strings.Contains(e.Detail, "BenchmarkDigestBytes/100B") {
		t.Errorf("the verdict does not name what decided and what was left out: %s\n%s", e.Summary, e.Detail)
	}
	text := w.hone("verdict", "--recompute", e.ID)
	if !strings.Contains(text, "matches the stored verdict") || !strings.Contains(text, "BenchmarkDigestBytes/100B left out") {
		t.Errorf("recompute:\n%s", text)
	}
	if e.Reason != verdict.ReasonNoChange {
		t.Errorf("both sides declare the same work: %s (%s), want no-change", e.Verdict, e.Reason)
	}
}
