package verdict

import (
	"fmt"
	"strings"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// judgeBench sets the verdict of an entry whose gates all passed from its
// bench's final sequential decision and its risk signals, and for a
// harness what its benchmarks show alone (judgeHarness).
func judgeBench(e *Entry) {
	defer judgeHarness(e)
	b := e.Bench
	st := b.Stat(b.Metric)
	if st == nil || len(b.Decisions) == 0 {
		e.setVerdict(ledger.VerdictError, ReasonTooling, "the bench produced no samples of "+b.Metric)
		return
	}
	figures := benchFigures(b, st)
	e.Speedup = st.Speedup
	thr := fmt.Sprintf("%.3g", 1+b.Threshold)
	final := b.Decisions[len(b.Decisions)-1]
	if reg := b.regressions(); len(reg) > 0 && final != decSlower {
		e.setVerdict(ledger.VerdictRejectedBench, ReasonRegressed,
			fmt.Sprintf("a benchmark that decides is slower: %s (its %s speedup CI lies below 1), whatever the geometric mean %.3fx [%.3f, %.3f]",
				strings.Join(reg, ", "), b.Metric, st.Speedup, st.CILow, st.CIHigh))
		e.Summary = e.Reason + ": " + figures + "; slower: " + strings.Join(reg, ", ")
		return
	}
	// A harness bench whose geometric mean did not decide is faster when
	// a deciding benchmark was decided faster at its share of the rates
	// (FamilyBonferroni); a regression was ruled out above, and
	// judgeHarness holds it to the rest as it holds the geometric mean.
	faster, why := final == decFaster, fmt.Sprintf("the %s speedup CI lower bound %.3f clears %s and p = %.2g", b.Metric, st.CILow, thr, st.P)
	var alone []string
	if final != decFaster && final != decSlower {
		alone = b.benchmarksWhere(func(r *BenchmarkResult) bool { return r.FamilyDecision == decFaster })
		faster = len(alone) > 0
		why = fmt.Sprintf("%s decided faster than %s on %s with the design's rates shared among the %d benchmarks that decide (Bonferroni), none slower, while the geometric mean %.3fx [%.3f, %.3f] did not decide",
			strings.Join(alone, ", "), thr, b.Metric, b.deciding(), st.Speedup, st.CILow, st.CIHigh)
	}
	if faster && disagree(e, b, st) {
		return
	}
	switch {
	case faster && len(e.RiskSignals) > 0:
		e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonImproved,
			fmt.Sprintf("faster (%s), but the patch adds risk signals a benchmark cannot judge: %s; a person must review it",
				why, strings.Join(e.RiskSignals, ", ")))
	case faster:
		e.setVerdict(ledger.VerdictAccepted, ReasonImproved, "faster: "+why)
	case final == decSlower:
		e.setVerdict(ledger.VerdictRejectedBench, ReasonRegressed,
			fmt.Sprintf("slower: the %s speedup CI [%.3f, %.3f] lies below 1", b.Metric, st.CILow, st.CIHigh))
	case final == decSame || st.CIHigh < 1+b.Threshold:
		e.setVerdict(ledger.VerdictRejectedBench, ReasonNoChange,
			fmt.Sprintf("no change of at least %.3g%%: the %s speedup CI is [%.3f, %.3f]", b.Threshold*100, b.Metric, st.CILow, st.CIHigh))
	default:
		e.setVerdict(ledger.VerdictRejectedBench, ReasonInconclusive,
			fmt.Sprintf("inconclusive after %d pairs: the %s speedup CI [%.3f, %.3f] straddles %s; this run could detect changes of about %.2g%%",
				b.Pairs, b.Metric, st.CILow, st.CIHigh, thr, st.DetectableChange*100))
	}
	if len(alone) > 0 {
		figures += "; faster alone: " + strings.Join(alone, ", ")
	}
	switch e.Verdict {
	case ledger.VerdictRejectedBench:
		e.Summary = e.Reason + ": " + figures
	case ledger.VerdictNeedsHumanReview:
		e.Summary = figures + "; risk: " + strings.Join(e.RiskSignals, ", ")
	default:
		e.Summary = figures
	}
}

// disagree sets the verdict of a "faster" that the other metrics do not
// bear out, and reports whether it did. An instructions-tier speedup must
// be confirmed by the cpu-time check (a candidate can tell it runs under
// valgrind or perf, and neither counts the kernel's work): a slowdown
// there is a regression, no clear speedup needs a person. A cpu-time
// speedup whose wall time is clearly slower needs a person too: wall time
// is too noisy here to demand a gain, not to notice a loss.
func disagree(e *Entry, b *Bench, st *MetricStats) bool {
	switch b.Metric {
	case workspace.MetricInstructions:
		var ck *MetricStats
		if b.Check != nil {
			for i := range b.Check.Metrics {
				if b.Check.Metrics[i].Metric == workspace.MetricCPUTime {
					ck = &b.Check.Metrics[i]
				}
			}
		}
		switch {
		case ck == nil:
			e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonUnconfirmed, "faster in instructions, but no cpu-time check confirms it; a person must review it")
		case ck.CIHigh < 1:
			e.setVerdict(ledger.VerdictRejectedBench, ReasonRegressed, fmt.Sprintf(
				"faster in instructions (CI lower bound %.3f) but slower in cpu-time: the check's speedup CI [%.3f, %.3f] lies below 1; the candidate may behave differently when counted", st.CILow, ck.CILow, ck.CIHigh))
		case ck.CILow < 1+b.Threshold:
			// Not merely above 1: a candidate that is only cheaper when
			// counted is, in time, a layout-only change, and those land
			// a percent or two faster by placement often enough.
			e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonUnconfirmed, fmt.Sprintf(
				"faster in instructions (CI lower bound %.3f), but the cpu-time check's speedup CI [%.3f, %.3f] does not clear %.3g; a person must review it", st.CILow, ck.CILow, ck.CIHigh, 1+b.Threshold))
		default:
			return false
		}
		e.Summary = e.Reason + ": " + benchFigures(b, st)
		return true
	case workspace.MetricCPUTime:
		w := b.Stat(workspace.MetricWall)
		if w == nil || w.CIHigh >= 1 {
			return false
		}
		e.setVerdict(ledger.VerdictNeedsHumanReview, ReasonWallSlower, fmt.Sprintf(
			"faster in cpu-time (CI lower bound %.3f), but slower in wall time: its speedup CI [%.3f, %.3f] lies below 1; work may have moved where cpu-time does not see it; a person must review it", st.CILow, w.CILow, w.CIHigh))
		e.Summary = e.Reason + ": " + benchFigures(b, st) + fmt.Sprintf("; wall %.3fx [%.3f, %.3f]", w.Speedup, w.CILow, w.CIHigh)
		return true
	}
	return false
}

// benchFigures is the one-line summary of the deciding metric.
func benchFigures(b *Bench, st *MetricStats) string {
	of := ""
	if b.Format != "" {
		of = fmt.Sprintf(" (geomean of %d benchmarks)", b.deciding())
	}
	return fmt.Sprintf("speedup %.3fx [%.3f, %.3f] %s%s, p=%.2g, %d pairs", st.Speedup, st.CILow, st.CIHigh, b.Metric, of, st.P, st.Pairs)
}

// setVerdict fills the verdict word, reason and detail; the summary defaults
// to the detail's first clause.
func (e *Entry) setVerdict(word, reason, detail string) {
	e.Verdict, e.Reason, e.Detail = word, reason, detail
	e.Summary = oneLine(detail)
}

// gateRejected records the candidate failing a gate (or its build or bench
// command).
func (e *Entry) gateRejected(g GateResult) {
	detail := fmt.Sprintf("gate %q failed: %s", g.Name, g.Message)
	if g.Candidate != nil && g.Candidate.OutputTail != "" {
		detail += "\n" + g.Candidate.OutputTail
	}
	e.setVerdict(ledger.VerdictRejectedGate, ReasonGateFailed, detail)
	e.Summary = oneLine(fmt.Sprintf("gate %s failed: %s", g.Name, g.Message))
}

// harnessError records an error verdict: the baseline or the environment
// failed, which says nothing about the patch.
func (e *Entry) harnessError(reason, detail string) {
	e.setVerdict(ledger.VerdictError, reason, detail)
}

// markWeak flags a verdict whose commands did not run in the full jail.
func (e *Entry) markWeak() { e.Environment.markWeak(&e.Common, e.Summary) }

// weakPrefix heads the summary of a verdict or calibration whose commands
// did not run in the full jail.
const weakPrefix = "weak isolation ("

// markWeak sets c's summary, and when the commands did not run in the full
// jail sets Weak and FlagWeak (for programs and every view) and heads the
// summary with the isolation they had (for people).
func (env *Environment) markWeak(c *ledger.Common, summary string) {
	c.Summary = summary
	iso := env.Isolation
	if iso == "" || iso == "full" {
		return
	}
	env.Weak = true
	c.AddFlag(ledger.FlagWeak)
	c.Summary = oneLine(weakPrefix + iso + "): " + summary)
}

// oneLine keeps a note-safe single line of at most 200 bytes.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "..."
	}
	return s
}
