package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// xxhash's inlining made a few of its sixteen benchmarks faster (1.40x
// at most) and left the rest as they were: a geometric mean of a few per
// cent, which the threshold of 2% lets through only after many pairs, if
// ever. Decided alone at its share of the rates,
// the one benchmark accepts the patch; the verdict names it, and the bench
// stops once it is decided and nothing looks slower.
func TestOneBenchmarkOfManyDecidedFasterAloneAcceptsThePatch(t *testing.T) {
	var names []string
	ratio := map[string]float64{}
	for i := range 6 {
		name := "Benchmark" + string(rune('A'+i))
		names, ratio[name] = append(names, name), 1
	}
	ratio["BenchmarkA"] = 0.9 // 1.11x; alone in six, a geometric mean of 1.018
	m := &harnessMeter{names: names, answer: jittery(ratio, 0.005)}
	hr := harnessOf(m)
	hr.protocol.MaxPairs = 30
	e := judged(t, hr)
	b := e.Bench
	if e.Verdict != ledger.VerdictAccepted || e.Reason != ReasonImproved || !strings.Contains(e.Summary, "faster alone: BenchmarkA") || !strings.Contains(e.Detail, "Bonferroni") {
		t.Fatalf("%s (%s): %s\n%s", e.Verdict, e.Reason, e.Summary, e.Detail)
	}
	if b.Decisions[len(b.Decisions)-1] == decFaster {
		t.Errorf("the geometric mean decided faster (%v): the test does not show the benchmark deciding alone", b.Decisions)
	}
	if b.Pairs >= b.MaxPairs {
		t.Errorf("%d of %d pairs: the bench went on after BenchmarkA was decided", b.Pairs, b.MaxPairs)
	}
	if re := recompute(e); !sameVerdict(e, re) || re.Summary != e.Summary {
		t.Errorf("recomputed to %s (%s): %s", re.Verdict, re.Reason, re.Summary)
	}
	old := *e
	oldBench := *b
	oldBench.Family = ""
	old.Bench = &oldBench
	if re := recompute(&old); re.Verdict == ledger.VerdictAccepted {
		t.Errorf("an entry judged on the geometric mean alone recomputed to an accept on one benchmark: %s", re.Summary)
	}
}

// A deciding benchmark decided slower past the threshold ends the bench at
// that look: the patch is rejected whatever the others would show, so
// the pairs after it would be spent on nothing.
func TestABenchmarkDecidedSlowerEndsTheBench(t *testing.T) {
	names := []string{"BenchmarkA", "BenchmarkB", "BenchmarkC", "BenchmarkD"}
	m := &harnessMeter{names: names, answer: jittery(map[string]float64{"BenchmarkA": 2, "BenchmarkB": 1, "BenchmarkC": 1, "BenchmarkD": 1}, 0.2)}
	hr := harnessOf(m)
	hr.protocol.MaxPairs = 30
	e := judged(t, hr)
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonRegressed || !strings.Contains(e.Summary, "slower: BenchmarkA") {
		t.Fatalf("%s (%s): %s", e.Verdict, e.Reason, e.Summary)
	}
	if b := e.Bench; b.Pairs >= b.MaxPairs {
		t.Errorf("%d of %d pairs: the bench went on after BenchmarkA was decided slower", b.Pairs, b.MaxPairs)
	}
}

// The family rule keeps the design's false-accept rate: m benchmarks, each
// truly faster by exactly the threshold (the most a false "faster" can be
// wrong by), measured with 3% noise a pair, call any of them faster in at
// most the design's one-sided 2.5% of verdicts; without the division by
// m, each would spend the whole rate and the chance that one of them does
// grows with m, past the bound.
func TestFamilyRuleHoldsTheFalseAcceptRateInSimulation(t *testing.T) {
	const (
		verdicts = 2000
		members  = 12
	)
	p := workspace.DefaultBench
	rate := func(share int) float64 {
		rng := rand.New(rand.NewPCG(21, 22))
		b := newBench("sim", p)
		b.Family = FamilyBonferroni
		b.plan()
		b.Decisions = make([]string, len(b.Looks))
		hits := 0
		for range verdicts {
			for range members {
				s := Samples{Metric: workspace.MetricCPUTime}
				for range p.MaxPairs {
					base := math.Exp(0.03 * rng.NormFloat64())
					s.Baseline = append(s.Baseline, base)
					s.Candidate = append(s.Candidate, base/(1+p.Threshold)*math.Exp(0.03*rng.NormFloat64()))
				}
				if firstDecision(b, &s, share) == decFaster {
					hits++
					break
				}
			}
		}
		return float64(hits) / verdicts
	}
	bound := (1 - p.Confidence) / 2
	shared, whole := rate(members), rate(1)
	t.Logf("any of %d benchmarks at the threshold called faster: %.2f%% with the rates shared, %.2f%% without (bound %.1f%%)", members, 100*shared, 100*whole, 100*bound)
	if shared > bound {
		t.Errorf("with the rates shared among %d benchmarks, %.2f%% of verdicts called one faster, above %.1f%%", members, 100*shared, 100*bound)
	}
	if whole <= bound {
		t.Error(fmt.Sprintf("without sharing the rates only %.2f%% were: this simulation cannot tell the rules apart", 100*whole))
	}
}
