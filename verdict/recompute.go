package verdict

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Recompute re-derives a stored verdict from its own raw samples: every
// metric's statistics, the sequential decision after each batch, and the
// verdict word. It returns the recomputed entry and whether it matches the
// stored one. Gate outcomes are facts of the run and are taken as stored,
// and so is the word of a verdict such a fact ended (benchDecided).
// id is a verdict entry id, or a patch id whose latest verdict it is (either
// may be a unique prefix), as Show takes.
func Recompute(ctx context.Context, ws *workspace.Workspace, id string) (*Entry, bool, error) {
	s, err := verdictEntry(ctx, ledger.Open(ws), id)
	if err != nil {
		return nil, false, err
	}
	var stored Entry
	if err := s.Decode(&stored); err != nil {
		return nil, false, err
	}
	re := recompute(&stored)
	return re, sameVerdict(&stored, re), nil
}

// recompute returns a copy of e with its bench-derived fields computed again.
func recompute(e *Entry) *Entry {
	re := *e
	if e.Bench == nil {
		return &re
	}
	b := *e.Bench
	b.Metrics = statsOf(&b)
	b.Benchmarks = slices.Clone(b.Benchmarks)
	benchmarkStats(&b)
	b.Decisions = replayDecisions(&b)
	decided := benchDecided(e)
	if !decided {
		// A bench stopped by a failure decided at the looks it reached
		// before it, which a look the failure came at is not.
		b.Decisions = b.Decisions[:min(len(b.Decisions), len(e.Bench.Decisions))]
	}
	if b.Check != nil {
		ck := *b.Check
		ck.Metrics = nil
		for _, s := range ck.Samples {
			ck.Metrics = append(ck.Metrics, computeStats(s, b.Confidence, b.Seed, b.Resamples, b.Method))
		}
		b.Check = &ck
	}
	if b.Layout != nil {
		l := *b.Layout
		l.Layouts = slices.Clone(l.Layouts)
		b.Layout = &l
	}
	re.Bench = &b
	if decided {
		judgeBench(&re)
		judgeLayouts(&re)
		re.reviewUnseeded()
	}
	return &re
}

// benchDecided reports a verdict that its bench's figures decided: every
// gate passed, and it is neither an error nor an interruption. Any other
// verdict that has a bench was ended by a fact of its run (a bench run
// that failed, a baseline that could not be measured, a cancel), which
// recomputing takes as stored, as it takes the gates: its figures are
// recomputed, its word is not judged again.
func benchDecided(e *Entry) bool {
	if e.Verdict == ledger.VerdictError || e.Verdict == ledger.VerdictCancelled {
		return false
	}
	for _, g := range e.Gates {
		if !g.Passed {
			return false
		}
	}
	return true
}

// replayDecisions repeats the sequential decision at every look, each
// with the bench's own method and recorded levels: the planned looks of
// MethodEquivalence, the batch boundaries of the methods before it.
func replayDecisions(b *Bench) []string {
	for i := range b.Samples {
		if b.Samples[i].Metric == b.Metric {
			return replay(b, &b.Samples[i])
		}
	}
	return nil
}

// replay repeats the sequential decision on samples at every batch
// boundary of b.
func replay(b *Bench, samples *Samples) []string {
	if b.BatchSize <= 0 {
		return nil
	}
	var ns []int
	if b.Method == MethodEquivalence {
		for _, l := range b.Looks {
			if l.Pairs <= b.Pairs {
				ns = append(ns, l.Pairs)
			}
		}
	} else {
		for n := b.PooledPairs; n < b.Pairs; {
			n = min(n+b.BatchSize, b.MaxPairs, b.Pairs)
			ns = append(ns, n)
		}
	}
	var out []string
	for _, n := range ns {
		prefix := Samples{Metric: samples.Metric, Unit: samples.Unit, Baseline: samples.Baseline[:n], Candidate: samples.Candidate[:n]}
		d, _ := b.decideLook(prefix, len(out))
		if d == decMeasureMore && n >= b.MaxPairs {
			d = decUndecided
		}
		out = append(out, d)
	}
	return out
}

func sameVerdict(a, b *Entry) bool {
	if a.Verdict != b.Verdict || a.Reason != b.Reason || (a.Bench == nil) != (b.Bench == nil) {
		return false
	}
	if a.Bench == nil {
		return true
	}
	if !exclusionsHold(b.Bench) || !noisierFloorHolds(b.Bench) || !slices.Equal(a.Bench.Decisions, b.Bench.Decisions) || len(a.Bench.Metrics) != len(b.Bench.Metrics) || len(a.Bench.Benchmarks) != len(b.Bench.Benchmarks) {
		return false
	}
	am, bm := slices.Clone(a.Bench.Metrics), slices.Clone(b.Bench.Metrics)
	for i := range a.Bench.Benchmarks {
		am = append(am, a.Bench.Benchmarks[i].CPUStats)
		bm = append(bm, b.Bench.Benchmarks[i].CPUStats)
	}
	for i, x := range am {
		y := bm[i]
		for _, pair := range [][2]float64{
			{x.Speedup, y.Speedup}, {x.CILow, y.CILow}, {x.CIHigh, y.CIHigh}, {x.P, y.P},
			{x.BaselineMedian, y.BaselineMedian}, {x.CandidateMedian, y.CandidateMedian},
		} {
			if !approxEqual(pair[0], pair[1]) {
				return false
			}
		}
	}
	return true
}

// approxEqual tolerates the last-digit rounding of a TOML round trip.
func approxEqual(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

// calibrationWarning is empty when this host calibrated the target within
// CalibrationMaxAge, else a sentence saying what to run.
func calibrationWarning(ctx context.Context, ws *workspace.Workspace, target, host string) string {
	advice := fmt.Sprintf("run `hone calibrate %s` to check the protocol on this machine", target)
	s, err := ledger.Open(ws).Latest(ctx, target, ledger.KindCalibration)
	if err != nil {
		return fmt.Sprintf("no calibration of %q on record; %s", target, advice)
	}
	var c CalibrationEntry
	if err := s.Decode(&c); err != nil {
		return fmt.Sprintf("the latest calibration of %q cannot be read (%v); %s", target, err, advice)
	}
	if c.Host != host {
		return fmt.Sprintf("the latest calibration of %q was made on host %q, not %q; %s", target, c.Host, host, advice)
	}
	if age := time.Since(c.Created); age > CalibrationMaxAge {
		return fmt.Sprintf("the latest calibration of %q on this host is %d days old; %s", target, int(age.Hours()/24), advice)
	}
	return ""
}
