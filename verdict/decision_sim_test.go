package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/hone-perf/hone/workspace"
)

// The decision rule is proven by simulation: the bench's own design and
// decision code (newBench, plan, toNextLook, decide: what the bench loop
// runs between its measurements), fed pairs in random order by a
// simulated machine, judge 10,000 verdicts of each case, and the rates are
// held to what the design promises: a true speedup of exactly
// 1+threshold, or half of it, is accepted ("faster") at most at the
// nominal one-sided rate (2.5% at 95%), A/A at most 0.1%, a true change of
// exactly the threshold is called "same" at most at the equivalence level
// 1-confidence, and A/A on a quiet machine stops within 12 pairs on
// average. The rule of older entries (every look at the full confidence)
// is run on the same machines beside it and must break the bound at the
// threshold, which shows the test can fail.

// machine is a simulated host running a workload of 10 ms: each run's log
// time is its noise, a slow drift of the host's speed, and a bias of the
// run's environment padding on the side's binary; the candidate is
// speedup times faster.
type machine struct {
	rng     *rand.Rand
	speedup float64
	noise   func(*rand.Rand) float64
	drift   float64 // amplitude of a sine of period 400 runs, in log time
	phase   float64
	bias    *[2][64]float64 // per side and padding, in log time; nil: none
	t       int
}

func (m *machine) time(cand bool, pad int) float64 {
	m.t++
	v := m.noise(m.rng) + m.drift*math.Sin(m.phase+2*math.Pi*float64(m.t)/400)
	side := 0
	if cand {
		side = 1
		v -= math.Log(m.speedup)
	}
	if m.bias != nil {
		v += m.bias[side][pad%64]
	}
	return 0.010 * math.Exp(v)
}

type simCase struct {
	name    string
	speedup float64
	noise   string
	maxRate float64
}

// noises are the simulated machines' run-to-run noise in log time:
// normal (2% a run), quiet (1% a run: the calibrated sample workload on an
// idle host), heavy-tailed (Student's t with 3 degrees of freedom), normal
// under a slow drift of the host's speed by ±20%, and normal with a bias
// of up to a few percent that the environment's size puts on each build.
func newMachine(noise string, speedup float64, rng *rand.Rand) *machine {
	m := &machine{rng: rng, speedup: speedup, noise: func(r *rand.Rand) float64 { return 0.02 * r.NormFloat64() }}
	switch noise {
	case "quiet":
		m.noise = func(r *rand.Rand) float64 { return 0.01 * r.NormFloat64() }
	case "heavy-tailed":
		m.noise = func(r *rand.Rand) float64 {
			chi := 0.0
			for range 3 {
				z := r.NormFloat64()
				chi += z * z
			}
			return 0.015 * r.NormFloat64() / math.Sqrt(chi/3)
		}
	case "drifting":
		m.drift, m.phase = 0.2, 2*math.Pi*rng.Float64()
	case "setup-biased":
		m.bias = &[2][64]float64{}
		for s := range m.bias {
			for i := range m.bias[s] {
				m.bias[s][i] = 0.02 * rng.NormFloat64()
			}
		}
	}
	return m
}

const simVerdicts = 10000

// simResult counts a case's final decisions.
type simResult struct {
	accepts, sames int
	pairs          float64 // mean
}

// simulate judges n verdicts of c, each on a machine of its own, with the
// design every new bench has, or with old the rule of older entries.
func simulate(c simCase, n int, seed uint64, old bool) simResult {
	rng := rand.New(rand.NewPCG(seed, 0x73696d))
	p := workspace.DefaultBench
	s := Samples{Metric: workspace.MetricCPUTime}
	var r simResult
	// Every verdict of a case plans the same looks: plan them once.
	fresh := newBench("cand", p)
	if old {
		fresh.Method = MethodPaired
	} else {
		fresh.plan()
	}
	for range n {
		b := *fresh
		s.Baseline, s.Candidate = s.Baseline[:0], s.Candidate[:0]
		switch simBench(&b, &s, newMachine(c.noise, c.speedup, rng), rng) {
		case decFaster:
			r.accepts++
		case decSame:
			r.sames++
		}
		r.pairs += float64(b.Pairs)
	}
	r.pairs /= float64(n)
	return r
}

// simBench is the bench loop of bench.go on machine m: pairs up to each
// look, each with its own padding and a random order of its sides, then
// the look's decision.
func simBench(b *Bench, s *Samples, m *machine, rng *rand.Rand) string {
	for b.Pairs < b.MaxPairs {
		for range b.toNextLook() {
			pad := rng.IntN(MaxEnvPad)
			var base, cand float64
			if rng.IntN(2) == 1 {
				cand = m.time(true, pad)
				base = m.time(false, pad)
			} else {
				base = m.time(false, pad)
				cand = m.time(true, pad)
			}
			s.Baseline, s.Candidate = append(s.Baseline, base), append(s.Candidate, cand)
			b.Pairs++
		}
		if d, _ := b.decide(*s); d != decMeasureMore {
			return d
		}
	}
	return decUndecided
}

func TestDecisionRuleHoldsItsErrorRatesInSimulation(t *testing.T) {
	thr, conf := workspace.DefaultBench.Threshold, workspace.DefaultBench.Confidence
	var cases []simCase
	for _, noise := range []string{"normal", "heavy-tailed", "drifting"} {
		cases = append(cases,
			simCase{"A/A " + noise, 1, noise, 0.001},
			simCase{"halfway to the threshold " + noise, 1 + thr/2, noise, 0.025},
			simCase{"at the threshold " + noise, 1 + thr, noise, 0.025})
	}
	cases = append(cases, simCase{"A/A setup-biased", 1, "setup-biased", 0.001}, simCase{"A/A quiet", 1, "quiet", 0.001})
	var mu sync.Mutex
	oldBroke := false
	// The subtests run in parallel and the group waits for them all.
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				r := simulate(c, simVerdicts, uint64(i+1), false)
				rate, same := float64(r.accepts)/simVerdicts, float64(r.sames)/simVerdicts
				old := ""
				if c.speedup == 1+thr {
					o := simulate(c, simVerdicts, uint64(i+1), true)
					oldRate := float64(o.accepts) / simVerdicts
					old = fmt.Sprintf("; old rule %.2f%% (%.1f pairs)", 100*oldRate, o.pairs)
					if oldRate > c.maxRate {
						mu.Lock()
						oldBroke = true
						mu.Unlock()
					}
					if same > 1-conf {
						t.Errorf("a true change of the threshold called same in %.2f%%, above %.0f%%", 100*same, 100*(1-conf))
					}
				}
				t.Logf("%s: accepted %5.2f%% (bound %.1f%%), same %5.2f%%, %.1f pairs%s", c.name, 100*rate, 100*c.maxRate, 100*same, r.pairs, old)
				if rate > c.maxRate {
					t.Errorf("%.2f%% accepted, above %.1f%%", 100*rate, 100*c.maxRate)
				}
				if c.noise == "quiet" && r.pairs > 12 {
					t.Errorf("A/A on a quiet machine took %.1f pairs on average, over 12", r.pairs)
				}
			})
		}
	})
	if !oldBroke {
		t.Error("the rule of older entries kept the bound at the threshold too: this simulation cannot tell the rules apart")
	}
}
