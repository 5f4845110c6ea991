package verdict

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict/stats"
)

// LayoutReport is how a verdict's bench sampled code layout (see
// build.Layout): the layouts each side was linked in (each pair's is in
// its setup, Bench.Setups) and how much the figures moved between them.
type LayoutReport struct {
	// Seed draws the layouts (build.Layouts). It comes from the pin and
	// the protocol's order seed, so that every verdict of a pin links the
	// baseline in the same layouts, which the build cache then keeps (a
	// rejudge links the same ones too); verdicts before that drew it from
	// their input seed. Knowing the pads beforehand buys a candidate
	// nothing: its code moves with them, and every offset within a line is
	// drawn once whatever its own shift.
	Seed int64 `toml:"seed" json:"seed"`
	// OneLayout, when set, says why each side was built in one layout
	// only: the target opted out ([bench] layouts = 1), or its toolchain
	// cannot be laid out. Every view then says "one layout".
	OneLayout string         `toml:"one_layout,omitempty" json:"one_layout,omitempty"`
	Layouts   []LayoutResult `toml:"layouts,omitempty" json:"layouts,omitempty"`
	// Spread is the baseline against itself across layouts: the largest
	// ratio of two layouts' baseline medians, less 1. It costs no extra
	// run, and it is what layout alone does to this program here.
	Spread float64 `toml:"spread" json:"spread"`
	// Noise is the baseline against itself within a layout: the median
	// over layouts of the largest ratio of two of its runs, less 1. A
	// spread that is not twice the noise is not taken for layout.
	Noise float64 `toml:"noise" json:"noise"`
	// WithoutBest is the deciding metric's CI lower bound without the
	// pairs of the layout with the largest speedup: an acceptance that
	// does not clear the threshold without them depends on one layout.
	WithoutBest float64 `toml:"without_best,omitempty" json:"without_best,omitempty"`
	// WithoutWorst is its CI upper bound without the pairs of the layout
	// with the smallest speedup: a slowdown that is not below 1 without
	// them is where one layout's code landed, not the patch's doing.
	WithoutWorst float64 `toml:"without_worst,omitempty" json:"without_worst,omitempty"`
	// SetupSeconds is the wall time of the extra layout builds.
	SetupSeconds float64 `toml:"setup_seconds" json:"setup_seconds"`
	// Cached is how many of the baseline's layouts came from the build
	// cache, Relinked how many of either side's were another layout's
	// build linked again rather than built (build.BuildLayouts).
	Cached   int `toml:"cached,omitempty" json:"cached,omitempty"`
	Relinked int `toml:"relinked,omitempty" json:"relinked,omitempty"`
}

// LayoutResult is one layout of both sides: its pad, each side's binaries
// (build.Side.OutputsDigest) and the deciding metric within it.
type LayoutResult struct {
	build.Layout
	BaselineSHA256  string  `toml:"baseline_sha256" json:"baseline_sha256"`
	CandidateSHA256 string  `toml:"candidate_sha256" json:"candidate_sha256"`
	Pairs           int     `toml:"pairs" json:"pairs"`
	BaselineMedian  float64 `toml:"baseline_median" json:"baseline_median"`
	CandidateMedian float64 `toml:"candidate_median" json:"candidate_median"`
	// Speedup is the median of this layout's per-pair ratios.
	Speedup float64 `toml:"speedup" json:"speedup"`
}

// layoutSeed derives the layouts' seed from the pin and the order seed.
func layoutSeed(pin string, order int64) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", pin, order)
	return int64(h.Sum64() >> 1)
}

// layoutSet is the bench specs of every layout of both sides.
type layoutSet struct {
	specs [2][]jail.Spec // baseline, candidate by layout index
	rng   *rand.Rand
	round []int
}

// place returns spec (a run on the plain build: the bench's command, or
// one benchmark's of a harness, with its timeout and output cap) as the
// same run on layout k's build. It is the hook a harness bench calls for
// each run, with k from next once per pair; without layouts it is spec.
func (ls *layoutSet) place(spec jail.Spec, cand bool, k int) jail.Spec {
	if ls == nil || k == 0 {
		return spec
	}
	side := 0
	if cand {
		side = 1
	}
	l := ls.specs[side][k]
	l.Command, l.Timeout, l.OutputCap, l.OneCPU = spec.Command, spec.Timeout, spec.OutputCap, spec.OneCPU
	return l
}

// next is the next pair's layout: rounds that run every layout once
// each, in a seeded order, so that every layout gets as many pairs; 0
// without layouts.
func (ls *layoutSet) next() int {
	if ls == nil {
		return 0
	}
	if len(ls.round) == 0 {
		ls.round = ls.rng.Perm(len(ls.specs[0]))
	}
	k := ls.round[0]
	ls.round = ls.round[1:]
	return k
}

// newRound starts the measured pairs on a round of their own, so that the
// warm-up pairs, which took layouts from a round but are discarded, leave
// no layout with a pair fewer or more than the others.
func (ls *layoutSet) newRound() {
	if ls != nil {
		ls.round = nil
	}
}

// sampleLayouts makes the bench's pairs take the layouts of ls in turn:
// each pair's setup (its seed and padding drawn as ever) names its
// layout. Without ls every pair runs the plain builds.
func (br *benchRun) sampleLayouts(ls *layoutSet) {
	if ls == nil {
		return
	}
	br.layouts = ls
	br.draw = func() (PairSetup, error) {
		s, err := NewPairSetup(1)
		s.Layout = ls.next()
		return s, err
	}
}

// buildLayouts links both sides in the protocol's other layouts, after the
// gates passed on the plain builds. It returns the report for the bench and
// the set (nil for one layout). A baseline that cannot be laid out makes
// the verdict one layout, saying why; a candidate that fails to build in a
// layout the baseline builds in is rejected, like any failed build, so a
// build cannot refuse layouts to be judged on one.
func (j *judging) buildLayouts(ctx context.Context, base, cand *build.Side) (*LayoutReport, *layoutSet, *GateResult, error) {
	rep := &LayoutReport{Seed: layoutSeed(j.e.Pin, j.proto.OrderSeed)}
	n := j.proto.Layouts
	switch {
	case n <= 1:
		rep.OneLayout = "[bench] layouts = 1"
	case j.prior != nil && (j.prior.Layout == nil || j.prior.Layout.OneLayout != ""):
		rep.OneLayout = "pooled with a verdict of one layout"
	}
	if rep.OneLayout != "" {
		return rep, nil, nil, nil
	}
	ls, why, err := j.run.LayoutsFor(j.e.Pin, rep.Seed, n)
	if err != nil || ls == nil {
		rep.OneLayout = why
		return rep, nil, nil, err
	}
	start := time.Now()
	defer func() { rep.SetupSeconds = time.Since(start).Seconds() }()
	bss, err := j.run.BuildLayouts(ctx, build.Baseline, j.e.Pin, base, ls[1:])
	if err != nil {
		return nil, nil, nil, err
	}
	for _, bs := range bss {
		j.e.Environment.noteJail(bs.Result)
		if !bs.OK() || bs.OutputsDigest() == base.OutputsDigest() {
			rep.OneLayout = fmt.Sprintf("the pin does not link in another layout: %s", layoutFailure(bs))
			return rep, nil, nil, nil
		}
	}
	css, err := j.run.BuildLayouts(ctx, build.Candidate, j.e.Commit, cand, ls[1:])
	if err != nil {
		return nil, nil, nil, err
	}
	for i, cs := range css {
		j.e.Environment.noteJail(cs.Result)
		if !cs.OK() {
			l := ls[i+1]
			j.e.logs.add("build", "candidate", cs.Result)
			g := GateResult{Name: "build", Candidate: builtInfo(cs), Message: fmt.Sprintf("the candidate fails to build in layout %d (%s), which the pin builds in: %s", l.Index, describeLayout(l), buildFailure(cs, j.e.logs.cap))}
			return nil, nil, &g, nil
		}
	}
	set := &layoutSet{rng: rand.New(rand.NewPCG(uint64(j.seed), 0x7061697273))}
	for k, l := range ls {
		bs, cs := base, cand
		if k > 0 {
			bs, cs = bss[k-1], css[k-1]
			rep.Cached += btoi(bs.Cached)
			rep.Relinked += btoi(bs.Relinked) + btoi(cs.Relinked)
		}
		rep.Layouts = append(rep.Layouts, LayoutResult{Layout: l, BaselineSHA256: bs.OutputsDigest(), CandidateSHA256: cs.OutputsDigest()})
		set.specs[0] = append(set.specs[0], benchSpec(bs, j.t))
		set.specs[1] = append(set.specs[1], benchSpec(cs, j.t))
	}
	return rep, set, nil, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// describeLayout says in a few words how layout l moves the code.
func describeLayout(l build.Layout) string {
	if l.Order != 0 {
		return fmt.Sprintf("function order %d", l.Order)
	}
	return fmt.Sprintf("%d bytes of padding before its code", l.Pad)
}

func layoutFailure(s *build.Side) string {
	if !s.OK() {
		return s.Describe()
	}
	if s.Unmoved != "" {
		return s.Unmoved
	}
	return "its build does not link through cc on PATH"
}

// layoutFigures fills each layout's figures, the spread and WithoutBest
// from the deciding samples, as the bench left them and as Recompute
// reads them.
func layoutFigures(b *Bench) {
	r := b.Layout
	if r == nil || len(r.Layouts) < 2 {
		return
	}
	var s *Samples
	for i := range b.Samples {
		if b.Samples[i].Metric == b.Metric {
			s = &b.Samples[i]
		}
	}
	if s == nil || len(b.Setups) != len(s.Baseline) {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	best, bestSpeedup := -1, math.Inf(-1)
	worst, worstSpeedup := -1, math.Inf(1)
	var noise []float64
	for k := range r.Layouts {
		l := &r.Layouts[k]
		var base, cand, ratios []float64
		for i, setup := range b.Setups {
			if setup.Layout != l.Index {
				continue
			}
			base, cand = append(base, s.Baseline[i]), append(cand, s.Candidate[i])
			// A pair with a side at zero (a harness benchmark whose loop
			// costs nothing, or a geomean over one) has no ratio, as the
			// speedup's statistics leave it out (stats.LogRatios).
			if s.Baseline[i] > 0 && s.Candidate[i] > 0 {
				ratios = append(ratios, s.Baseline[i]/s.Candidate[i])
			}
		}
		l.Pairs = len(base)
		if l.Pairs == 0 {
			l.BaselineMedian, l.CandidateMedian, l.Speedup = 0, 0, 0
			continue
		}
		l.BaselineMedian, l.CandidateMedian, l.Speedup = stats.Median(base), stats.Median(cand), 0
		if len(ratios) > 0 {
			l.Speedup = stats.Median(ratios)
		}
		lo, hi = min(lo, l.BaselineMedian), max(hi, l.BaselineMedian)
		if len(base) >= 2 && slices.Min(base) > 0 {
			noise = append(noise, slices.Max(base)/slices.Min(base)-1)
		}
		if l.Speedup > bestSpeedup {
			best, bestSpeedup = l.Index, l.Speedup
		}
		if len(ratios) > 0 && l.Speedup < worstSpeedup {
			worst, worstSpeedup = l.Index, l.Speedup
		}
	}
	r.Spread, r.Noise = 0, 0
	if lo > 0 && !math.IsInf(hi, -1) {
		r.Spread = hi/lo - 1
	}
	if len(noise) > 0 {
		r.Noise = stats.Median(noise)
	}
	r.WithoutBest, r.WithoutWorst = 0, 0
	if rest := withoutLayout(b, s, best); len(rest.Baseline) >= 2 {
		r.WithoutBest = computeStats(rest, b.Confidence, b.Seed, b.Resamples, b.Method).CILow
	}
	if rest := withoutLayout(b, s, worst); len(rest.Baseline) >= 2 {
		r.WithoutWorst = computeStats(rest, b.Confidence, b.Seed, b.Resamples, b.Method).CIHigh
	}
}

// withoutLayout is the deciding samples s of b without layout k's pairs.
func withoutLayout(b *Bench, s *Samples, k int) Samples {
	rest := Samples{Metric: s.Metric, Unit: s.Unit}
	for i, setup := range b.Setups {
		if setup.Layout != k {
			rest.Baseline, rest.Candidate = append(rest.Baseline, s.Baseline[i]), append(rest.Candidate, s.Candidate[i])
		}
	}
	return rest
}

// judgeLayouts applies what the layouts say to a judged bench: a spread
// between layouts of about the threshold is flagged, an acceptance that
// does not hold without its best layout, or whose candidate links the
// same binary in every layout while the baseline's move, needs a person,
// and a verdict of one layout says so in every view.
func judgeLayouts(e *Entry) {
	b := e.Bench
	if b == nil || b.Layout == nil {
		return
	}
	r := b.Layout
	if r.OneLayout != "" {
		e.AddFlag(ledger.FlagOneLayout)
		e.Summary = oneLine(e.Summary + "; one layout (" + r.OneLayout + ")")
		return
	}
	layoutFigures(b)
	noChangeIfSlowerInOneLayout(e)
	if r.Spread >= b.Threshold && r.Spread > 2*r.Noise {
		e.AddFlag(ledger.FlagLayoutSensitive)
		e.Summary = oneLine(fmt.Sprintf("%s; layout-sensitive: the baseline moved %.1f%% between its %d layouts", e.Summary, r.Spread*100, len(r.Layouts)))
	}
	if e.Verdict != ledger.VerdictAccepted {
		return
	}
	evaded := false
	for i, a := range r.Layouts {
		for _, b := range r.Layouts[i+1:] {
			evaded = evaded || (a.CandidateSHA256 == b.CandidateSHA256 && a.BaselineSHA256 != b.BaselineSHA256)
		}
	}
	var why string
	switch {
	case evaded:
		why = "the candidate's build links the same binary in two layouts in which the pin's move: it was measured in fewer placements than the pin"
	case r.WithoutBest < 1+b.Threshold:
		why = fmt.Sprintf("not without the pairs of its best layout (CI lower bound %.3f < %.3g): the speedup depends on where the code landed", r.WithoutBest, 1+b.Threshold)
	default:
		return
	}
	summary := oneLine(e.Summary + "; depends on one layout")
	e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonLayout, "faster, but "+why+"; a person must review it")
	e.Summary = summary
}

// noChangeIfSlowerInOneLayout makes a bench decided "slower" that is not
// slower without its worst layout's pairs a rejection for no change. It is
// the accept side's rule (WithoutBest) turned round: a candidate that only
// moves code (a pad, an unused function) can land slower in one of its few
// layouts, and a CI of pairs that share layouts reads that one placement
// as the patch's cost.
func noChangeIfSlowerInOneLayout(e *Entry) {
	b := e.Bench
	st := b.Stat(b.Metric)
	if e.Verdict != ledger.VerdictRejectedBench || e.Reason != ReasonRegressed || !b.slowerInOneLayout() || st == nil {
		return
	}
	e.setVerdict(ledger.VerdictRejectedBench, ReasonNoChange, fmt.Sprintf(
		"no change of at least %.3g%%: the %s speedup CI [%.3f, %.3f] lies below 1, but not without the pairs of its worst layout (CI upper bound %.3f): the slowdown is where one layout's code landed",
		b.Threshold*100, b.Metric, st.CILow, st.CIHigh, b.Layout.WithoutWorst))
	e.Summary = oneLine(e.Reason + ": " + benchFigures(b, st) + "; slower in one layout only")
}

// slowerInOneLayout reports whether b was decided slower but is not slower
// without its worst layout's pairs (layoutFigures computes them).
func (b *Bench) slowerInOneLayout() bool {
	return b.Layout != nil && len(b.Decisions) > 0 && b.Decisions[len(b.Decisions)-1] == decSlower && b.Layout.WithoutWorst >= 1
}

// writeLayouts shows the layouts of a verdict's text view: one line when
// it had one, else each layout's figures, the spread and the noise.
func writeLayouts(w io.Writer, b *Bench) error {
	r := b.Layout
	switch {
	case r == nil:
		return nil
	case r.OneLayout != "":
		_, err := fmt.Fprintf(w, "one layout: %s\n", r.OneLayout)
		return err
	}
	measured := false
	for _, l := range r.Layouts {
		measured = measured || l.Pairs > 0
	}
	if !measured {
		// A bench ended by a failure has no figures per layout (they
		// are read when a bench is judged); zeros would read as measured.
		_, err := fmt.Fprintf(w, "%d layouts (seed %d, builds %.1fs, %d relinked, %d from the cache), no figures per layout: the bench ended before they were compared\n",
			len(r.Layouts), r.Seed, r.SetupSeconds, r.Relinked, r.Cached)
		return err
	}
	fmt.Fprintf(w, "%d layouts (seed %d, builds %.1fs, %d relinked, %d from the cache): baseline spread %.1f%%, noise %.1f%%, CI without the best layout from %.3f, without the worst up to %.3f\n",
		len(r.Layouts), r.Seed, r.SetupSeconds, r.Relinked, r.Cached, r.Spread*100, r.Noise*100, r.WithoutBest, r.WithoutWorst)
	unit := ""
	if s := b.Stat(b.Metric); s != nil {
		unit = s.Unit
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "layout\tpad\torder\tpairs\tbaseline\tcandidate\tspeedup\n")
	for _, l := range r.Layouts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%s\t%.3fx\n", l.Index, l.Pad, l.Order, l.Pairs, formatValue(l.BaselineMedian, unit), formatValue(l.CandidateMedian, unit), l.Speedup)
	}
	return tw.Flush()
}
