package verdict

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// The decision rule is proven by simulation: the real bench loop and
// decision code, fed by a simulated machine, judge 10,000 verdicts of each
// case, and the rates of "faster" (an accept) are held to what the design
// promises: a true speedup of exactly 1+threshold, or half of it, is
// accepted at most at the nominal one-sided rate (2.5% at 95%), and A/A
// at most 0.1%. The rule of older entries (every look at the full
// confidence) is run on the same machines beside it and must break the
// bound at the threshold, which shows the test can fail.

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

// simMeter is the measurer seam fed by a machine.
type simMeter struct {
	m   *machine
	out *jail.Result
}

func (s *simMeter) exec(context.Context, jail.Spec) (*jail.Result, error) { return s.out, nil }

func (s *simMeter) measure(_ context.Context, spec jail.Spec, _ string) (map[string]float64, *jail.Result, error) {
	return map[string]float64{workspace.MetricCPUTime: s.m.time(spec.Command == "cand", padOf(spec))}, s.out, nil
}

func (s *simMeter) counters(context.Context, jail.Spec) (map[string]float64, time.Duration) {
	return nil, 0
}

func padOf(spec jail.Spec) int {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, EnvPadVar+"="); ok {
			return len(v)
		}
	}
	return 0
}

type simCase struct {
	name    string
	speedup float64
	noise   string
	maxRate float64
}

// noises are the simulated machines' run-to-run noise in log time:
// normal, heavy-tailed (Student's t with 3 degrees of freedom), normal
// under a slow drift of the host's speed by ±20%, and normal with a bias
// of up to a few percent that the environment's size puts on each build.
func newMachine(noise string, speedup float64, rng *rand.Rand) *machine {
	m := &machine{rng: rng, speedup: speedup, noise: func(r *rand.Rand) float64 { return 0.02 * r.NormFloat64() }}
	switch noise {
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

// simulate judges n verdicts of c with the real bench loop and returns how
// many were "faster" and the mean pairs; old replays the rule of older
// entries on the same kind of machine instead.
func simulate(c simCase, n int, seed uint64, old bool) (accepts int, meanPairs float64) {
	rng := rand.New(rand.NewPCG(seed, 0x73696d))
	p := workspace.DefaultBench
	p.Warmup = 0
	out := &jail.Result{Stdout: jail.OutputOf([]byte("42\n")), Stderr: jail.OutputOf(nil), Wall: 10 * time.Millisecond}
	pads := 0
	draw := func() (PairSetup, error) {
		pads++
		return PairSetup{Seed: 1, EnvPad: rng.IntN(MaxEnvPad)}, nil
	}
	for i := range n {
		m := newMachine(c.noise, c.speedup, rng)
		var final string
		var pairs int
		if old {
			final, pairs = oldRule(m, p, rng)
		} else {
			p.OrderSeed = int64(i + 1)
			br := &benchRun{baseline: jail.Spec{Command: "base"}, candidate: jail.Spec{Command: "cand"}, protocol: p, meter: &simMeter{m: m, out: out}, draw: draw}
			b, fail, err := br.run(context.Background())
			if err != nil || fail != nil {
				panic(fmt.Sprint(err, fail))
			}
			final, pairs = b.Decisions[len(b.Decisions)-1], b.Pairs
		}
		if final == decFaster {
			accepts++
		}
		meanPairs += float64(pairs)
	}
	return accepts, meanPairs / float64(n)
}

// oldRule is the bench of entries before the design: looks after every
// batch, each at the full confidence, on pairs of random order.
func oldRule(m *machine, p workspace.BenchConfig, rng *rand.Rand) (string, int) {
	b := &Bench{Method: MethodPaired, Threshold: p.Threshold, Confidence: p.Confidence}
	s := Samples{Metric: workspace.MetricCPUTime}
	for k := 0; len(s.Baseline) < p.MaxPairs; k++ {
		for range p.Pairs {
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
		}
		if d, _ := b.decideLook(s, k); d != decMeasureMore {
			return d, len(s.Baseline)
		}
	}
	return decUndecided, len(s.Baseline)
}

func TestDecisionRuleHoldsItsErrorRatesInSimulation(t *testing.T) {
	thr := workspace.DefaultBench.Threshold
	var cases []simCase
	for _, noise := range []string{"normal", "heavy-tailed", "drifting"} {
		cases = append(cases,
			simCase{"A/A " + noise, 1, noise, 0.001},
			simCase{"halfway to the threshold " + noise, 1 + thr/2, noise, 0.025},
			simCase{"at the threshold " + noise, 1 + thr, noise, 0.025})
	}
	cases = append(cases, simCase{"A/A setup-biased", 1, "setup-biased", 0.001})
	type result struct {
		accepts, oldAccepts int
		pairs, oldPairs     float64
	}
	results := make([]result, len(cases))
	// Two workers: the machine running this is shared.
	var wg sync.WaitGroup
	next := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &results[i]
				r.accepts, r.pairs = simulate(cases[i], simVerdicts, uint64(i+1), false)
				if cases[i].speedup == 1+thr {
					r.oldAccepts, r.oldPairs = simulate(cases[i], simVerdicts, uint64(i+1), true)
				}
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	oldBroke := false
	for i, c := range cases {
		r := results[i]
		rate, oldRate := float64(r.accepts)/simVerdicts, float64(r.oldAccepts)/simVerdicts
		old := ""
		if c.speedup == 1+thr {
			old = fmt.Sprintf("; old rule %.2f%% (%.1f pairs)", 100*oldRate, r.oldPairs)
		}
		t.Logf("%-38s accepted %5.2f%% (%.1f pairs)%s; bound %.1f%%", c.name, 100*rate, r.pairs, old, 100*c.maxRate)
		if rate > c.maxRate {
			t.Errorf("%s: %.2f%% accepted, above %.1f%%", c.name, 100*rate, 100*c.maxRate)
		}
		if c.speedup == 1+thr && oldRate > c.maxRate {
			oldBroke = true
		}
	}
	if !oldBroke {
		t.Error("the rule of older entries kept the bound at the threshold too: this simulation cannot tell the rules apart")
	}
}
