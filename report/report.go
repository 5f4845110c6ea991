// Package report renders a workspace's optimization history as one
// self-contained HTML file: the ledger's attempts as a table, a forest plot of
// their speedup confidence intervals against the accept threshold, and the
// latest profile's hotspots as a bar chart. The page fetches nothing: styles
// are inline and the charts are inline SVG, so it can be mailed or archived.
//
// The package renders plain data; the caller gathers it from the ledger.
package report

import (
	_ "embed"
	"html/template"
	"io"
	"sync"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/verdict"
)

// Report is everything one page shows.
type Report struct {
	Workspace string    // shown in the heading
	Target    string    // the target reported on; "" means every target
	Generated time.Time // when the page was made
	Threshold float64   // accept threshold: a speedup CI must clear 1+Threshold
	Attempts  []Attempt // oldest first
	// Pins describes each commit attempts were made from, by commit: the
	// attempts table groups by pin, since a pin that moved makes one
	// diff's verdicts differ for reasons the diff does not show.
	Pins     map[string]Pin
	Profiles []Profile // the latest profile of each target shown
	// Honesty is, per target shown, how many of its accepts the
	// protocol's false-accept rate alone would explain.
	Honesty []verdict.Honesty
}

// Pin is one commit attempts were made from.
type Pin struct {
	Commit string
	// Date is the commit's committer date; zero when this clone lacks it.
	Date time.Time
	// OnBase reports that the protected base (BaseRefs) reaches the pin: an
	// agent's own commit is not on it, and its verdicts judge a world no
	// one else has.
	OnBase   bool
	BaseRefs []string // the protected base refs checked; empty when unknown
}

// Attempt is one proposal and, once judged, its verdict.
type Attempt struct {
	Target     string
	PatchID    string
	Pin        string // the pin commit the patch applies to
	Created    time.Time
	Class      int
	Hotspot    string
	Hypothesis string
	Verdict    string   // one of ledger's verdict words; "" while not judged
	Summary    string   // the verdict's one-line summary
	Flags      []string // the verdict's ledger.Flag* facts, shown beside its word
	// Signer is who signed the ledger commit that added the verdict (see
	// ledger.Signer.Name); Trusted is false for a verdict that does not count.
	Signer  string
	Trusted bool
	Metric  string // the metric the decision used, e.g. "cpu-time"
	// Speedup is baseline/candidate for Metric, with its confidence interval.
	// HasSpeedup is false when the verdict stopped before a benchmark (a
	// failed gate) or there is no verdict yet.
	HasSpeedup         bool
	Speedup, Low, High float64
	Confidence         float64 // e.g. 0.95
	// Benchmarks are the rows of a harness bench (format go or
	// google-benchmark): Speedup is then their geometric mean.
	Benchmarks []Benchmark
}

// Benchmark is one benchmark of a harness bench: its cpu-time per
// iteration speedup with its confidence interval.
type Benchmark struct {
	Name               string
	Decides, Regressed bool
	Speedup, Low, High float64
}

// Profile is one target's profile summary.
type Profile struct {
	Target   string
	ID       string
	Created  time.Time
	Event    string // the perf event sampled, e.g. "cpu-clock"
	Samples  int
	Hotspots []Hotspot // hottest first
}

// Hotspot is one function of a profile.
type Hotspot struct {
	Symbol  string
	FlatPct float64 // exclusive share of samples, 0-100
	CumPct  float64 // inclusive share, 0-100
	File    string
	Line    int
}

//go:embed report.html.tmpl
var pageSource string

// page is parsed on first use: every hone process links this package, and
// parsing at init would add to the start-up of commands that never render.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"pct":     func(f float64) string { return trimFloat(f, 1) + "%" },
		"ratio":   func(f float64) string { return trimFloat(f, 3) + "×" },
		"when":    func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"color":   colorOf,
		"inc":     func(i int) int { return i + 1 },
		"addOne":  func(f float64) float64 { return 1 + f },
		"hundred": func(f float64) float64 { return 100 * f },
		"addf":    func(a, b float64) float64 { return a + b },
		"float":   func(i int) float64 { return float64(i) },
		"short":   git.Short,
		"cilabel": verdict.CILabel,
	}).Parse(pageSource))
})

// Render writes r as an HTML page to w. Every string from the ledger is
// escaped by html/template, so a hypothesis cannot inject markup or script.
func Render(w io.Writer, r *Report) error {
	if err := page().Execute(w, newView(r)); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the HTML report")
	}
	return nil
}
