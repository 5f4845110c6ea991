package verdict

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the human summary of a verdict: the word and why, the
// gates, and a table of every metric.
func WriteText(w io.Writer, e *Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "patch\t%s (target %s)\n", e.PatchID, e.Target)
	fmt.Fprintf(tw, "verdict\t%s (%s)\n", e.Verdict, e.Reason)
	if len(e.Flags) > 0 {
		fmt.Fprintf(tw, "flags\t%s\n", strings.Join(e.Flags, ", "))
	}
	if e.InputSeed != 0 {
		fmt.Fprintf(tw, "input seed\t%d\n", e.InputSeed)
	}
	for _, line := range strings.Split(e.Detail, "\n") {
		fmt.Fprintf(tw, "\t%s\n", line)
	}
	if e.ID != "" {
		fmt.Fprintf(tw, "entry\t%s\n", e.ID)
	}
	if len(e.Gates) > 0 {
		var gs []string
		for _, g := range e.Gates {
			gs = append(gs, gateWord(g))
		}
		fmt.Fprintf(tw, "gates\t%s\n", strings.Join(gs, ", "))
	}
	env := e.Environment
	net := "network allowed"
	if env.NetworkDenied {
		net = "network denied"
	}
	iso := env.Isolation
	if env.Weak {
		iso = "weak: " + iso + ", not the full jail"
	}
	filter := "system call filter " + env.Seccomp
	if env.Seccomp == "" {
		filter = "no system call filter"
	}
	fmt.Fprintf(tw, "isolation\t%s (%s, %s)\n", iso, net, filter)
	for _, d := range e.KeptCheckouts {
		fmt.Fprintf(tw, "kept\t%s\n", d)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e.Bench != nil {
		looks := strings.Join(e.Bench.Decisions, " > ")
		if looks == "" {
			looks = "no look decided"
		}
		fmt.Fprintf(w, "\n%d pairs (%s) in %.1fs, commands %.1fs\n", e.Bench.Pairs, looks, e.Bench.Seconds, e.Bench.CommandSeconds)
		if e.Bench.Pairs > 0 {
			if err := writeMetrics(w, e.Bench); err != nil {
				return err
			}
		}
		writeBuildCPU(w, e.Gates)
		if err := writeBenchmarks(w, e.Bench); err != nil {
			return err
		}
		if !benchDecided(e) {
			// What the bench measured before it stopped is what a person
			// diagnoses the stop with.
			if err := writeSizing(w, e.Bench); err != nil {
				return err
			}
		}
		if ck := e.Bench.Check; ck != nil {
			for _, m := range ck.Metrics {
				if m.Metric == "cpu-time" {
					fmt.Fprintf(w, "cpu-time check of the instructions: %d pairs, speedup %.3fx [%.3f, %.3f]\n", ck.Pairs, m.Speedup, m.CILow, m.CIHigh)
				}
			}
		}
		return writeLayouts(w, e.Bench)
	}
	return nil
}

func gateWord(g GateResult) string {
	switch {
	case !g.Passed:
		return g.Name + " FAILED"
	case g.Baseline != nil && g.Baseline.Cached:
		return g.Name + " ok (baseline cached)"
	case g.Equivalence:
		return g.Name + " ok (equivalent)"
	}
	return g.Name + " ok"
}

// CILabel names an interval of the given level the one way every view
// does: "98.81% CI".
func CILabel(confidence float64) string {
	return fmt.Sprintf("%.4g%% CI", confidence*100)
}

func writeMetrics(w io.Writer, b *Bench) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tbaseline\tcandidate\tspeedup\t%s\tp\tcv b/c\toutliers b/c\tdetectable\n", CILabel(b.finalConfidence()))
	for _, m := range b.Metrics {
		name := m.Metric
		if name == b.Metric {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3fx\t[%.3f, %.3f]\t%.2g\t%.1f%%/%.1f%%\t%d/%d\t%.2g%%\n",
			name, formatValue(m.BaselineMedian, m.Unit), formatValue(m.CandidateMedian, m.Unit),
			m.Speedup, m.CILow, m.CIHigh, m.P, m.BaselineCV*100, m.CandidateCV*100,
			m.BaselineOutliers, m.CandidateOutliers, m.DetectableChange*100)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	how := `speedup: exp of the Hodges-Lehmann estimate of the pairs'
  log ratios ln(baseline/candidate) (above 1 is faster), with its %s
  (signed-rank); p: Wilcoxon signed-rank.`
	if !paired(b.Method) {
		how = `speedup: baseline median / candidate median (above 1
  is faster), with its %s (bootstrap); p: Mann-Whitney U.`
	}
	_, err := fmt.Fprintf(w, `* the deciding metric. `+how+`
  cv b/c: robust coefficient of variation (1.4826 MAD / median) of the
  baseline and of the candidate; outliers b/c: their samples outside 1.5 IQR
  (kept; medians resist them); detectable: the smallest change this run
  could have told from none.
`, CILabel(b.finalConfidence()))
	if err != nil || len(b.Looks) == 0 {
		return err
	}
	return writeLooks(w, b)
}

// writeLooks shows the sequential design: each planned look's pairs, the
// levels its decisions read, and what it decided.
func writeLooks(w io.Writer, b *Bench) error {
	same := (1 - b.Confidence) / 2
	if b.Method == MethodEquivalence {
		same = 1 - b.Confidence
	}
	fmt.Fprintf(w, "looks (%s: faster/slower spend %.3g%% each by O'Brien-Fleming type, same %.3g%% at each edge by Pocock type):\n", b.Method, (1-b.Confidence)/2*100, same*100)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  look\tpairs\tfaster/slower CI\tsame CI\tdecision\n")
	for i, l := range b.Looks {
		d := "-"
		if i < len(b.Decisions) {
			d = b.Decisions[i]
		}
		diff := fmt.Sprintf("%.4g%%", l.Confidence*100)
		if l.Confidence >= 1 {
			diff = "-" // a look for "same" alone
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%.4g%%\t%s\n", i+1, l.Pairs, diff, l.SameConfidence*100, d)
	}
	return tw.Flush()
}

// writeBenchmarks writes a harness bench's table: each benchmark's CPU
// time per iteration (the deciding figure: its loop's marginal cost), its
// wall time speedup, the counts it ran at, and how each side's CPU time
// scaled between them.
func writeBenchmarks(w io.Writer, b *Bench) error {
	if len(b.Benchmarks) == 0 {
		return nil
	}
	loop := ""
	if b.MaxLoopSeconds > 0 {
		loop = fmt.Sprintf("; counts sized for runs of at most %v at the smaller", time.Duration(b.MaxLoopSeconds*float64(time.Second)).Round(time.Millisecond))
	}
	if b.OneCPU {
		loop += "; each run on one CPU"
	}
	alone := ""
	if b.Family == FamilyBonferroni {
		alone = "; FASTER ALONE: decided faster at its share of the rates"
	}
	fmt.Fprintf(w, "\n%s benchmarks, cpu-time per iteration (* decides; the geometric mean above is over those%s%s):\n", b.Format, alone, loop)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "benchmark\titerations\tbaseline\tcandidate\tspeedup\t%s\twall speedup\tscaling\n", CILabel(b.finalConfidence()))
	for _, r := range b.Benchmarks {
		name, c, wl := r.Name, r.CPUStats, r.WallStats
		if r.Decides {
			name += " *"
		}
		if r.Regressed {
			name += " SLOWER"
		}
		switch {
		case r.FamilyDecision == decFaster:
			name += " FASTER ALONE"
		case r.Decision == decUndecided || r.Decision == decMeasureMore && r.Decides:
			name += " unresolved"
		}
		if r.Excluded != "" {
			name += " left out"
			if r.ExcludedAfter > 0 {
				name += fmt.Sprintf(" after %d pairs", r.ExcludedAfter)
			}
		}
		iters, scale := strconv.Itoa(r.Iterations), "-"
		if len(r.Counts) == 2 {
			iters = fmt.Sprintf("%d/%d", r.Counts[0], r.Counts[1])
			scale = fmt.Sprintf("%.2f/%.2f", r.BaselineScaling, r.CandidateScaling)
		}
		figures := fmt.Sprintf("%s\t%s\t%.3fx\t[%.3f, %.3f]\t%.3fx", formatValue(c.BaselineMedian, c.Unit), formatValue(c.CandidateMedian, c.Unit), c.Speedup, c.CILow, c.CIHigh, wl.Speedup)
		if r.Unmeasurable {
			figures = "too small to measure\t\t\t\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, iters, figures, scale)
	}
	return tw.Flush()
}

// writeSizing writes each harness benchmark's sizing runs: the counts
// each side tried and the CPU time of every run there, the figures that
// show a set-up no count outgrew.
func writeSizing(w io.Writer, b *Bench) error {
	for _, r := range b.Benchmarks {
		if len(r.Sizing) == 0 {
			continue
		}
		var tried []string
		for _, s := range r.Sizing {
			cpu := make([]string, len(s.CPU))
			for i, v := range s.CPU {
				cpu[i] = formatValue(v, "s")
			}
			tried = append(tried, fmt.Sprintf("%s %d: %s", s.Side, s.Count, strings.Join(cpu, " ")))
		}
		if _, err := fmt.Fprintf(w, "sizing %s (side count: cpu-time of each run): %s\n", r.Name, strings.Join(tried, "; ")); err != nil {
			return err
		}
	}
	return nil
}

func formatValue(v float64, unit string) string {
	if unit == "s" {
		switch {
		case v >= 1:
			return fmt.Sprintf("%.3fs", v)
		case v >= 1e-3:
			return fmt.Sprintf("%.2fms", v*1e3)
		}
		return fmt.Sprintf("%.1fµs", v*1e6)
	}
	if unit == "ns/op" {
		if v < 1e3 {
			return fmt.Sprintf("%.1fns", v)
		}
		return formatValue(v/1e9, "s")
	}
	return fmt.Sprintf("%.6g", v)
}

// WriteCalibrationText writes the human summary of a calibration.
func WriteCalibrationText(w io.Writer, c *CalibrationEntry) error {
	fmt.Fprintf(w, "calibration of %s on %s: metric %s, workload median %s, batches of %d up to %d pairs, threshold %.3g\n",
		c.Target, c.Host, c.Metric, formatValue(c.BaselineMedian, c.Unit), c.BatchSize, c.MaxPairs, c.Threshold)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "sessions\tcount\taccepted\tdetected slower\tsignificant\tmean pairs\tmean seconds\tmean speedup\n")
	rows := append([]SessionStats{c.AA}, c.Injected...)
	if c.LayoutShift != nil {
		rows = append(rows, *c.LayoutShift)
	}
	for i, s := range rows {
		name := "A/A"
		switch {
		case c.LayoutShift != nil && i == len(rows)-1:
			name = fmt.Sprintf("%d-byte layout shift", LayoutShift)
		case s.Inject > 0:
			name = fmt.Sprintf("+%.3g%% slowdown", s.Inject*100)
		case s.Inject < 0:
			name = fmt.Sprintf("%.3g%% speedup", -s.Inject*100)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d (%.0f%%)\t%d (%.0f%%)\t%d (%.0f%%)\t%.1f\t%.2f\t%.4f\n", name, s.Sessions,
			s.Accepts, s.Rate(s.Accepts)*100, s.Detected, s.Rate(s.Detected)*100, s.Significant, s.Rate(s.Significant)*100,
			s.MeanPairs, s.MeanSeconds, s.MeanSpeedup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c.Conclusion != "" {
		fmt.Fprintln(w, c.Conclusion)
	}
	if c.ID != "" {
		fmt.Fprintf(w, "entry %s (%.0fs)\n", c.ID, c.Seconds)
	}
	return nil
}

// writeBuildCPU shows what each side's build cost beside the speedup: work
// moved from the runs into the build makes the runs cheaper, not the
// program faster.
func writeBuildCPU(w io.Writer, gates []GateResult) {
	for _, g := range gates {
		if g.Name != "build" || g.Baseline == nil || g.Candidate == nil {
			continue
		}
		cached := ""
		if g.Baseline.Cached {
			cached = ", cached"
		}
		fmt.Fprintf(w, "build cpu-time: baseline %.2fs%s, candidate %.2fs\n", g.Baseline.CPUSeconds, cached, g.Candidate.CPUSeconds)
	}
}
