package benchformat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hone-perf/hone/internal/errs"
)

// Status is how one benchmark ended.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Skip: the benchmark skipped itself (b.Skip, SkipWithMessage). Go
	// prints skips only with -test.v; without it a skipped benchmark is
	// simply absent.
	Skip Status = "skip"
)

// Run is one harness run: one sample per benchmark.
type Run struct {
	Format string `json:"format"`
	// Benchmarks is sorted by name; names are unique.
	Benchmarks []Benchmark `json:"benchmarks"`
	// Passed is the harness's overall status: Go's final PASS, or a Google
	// Benchmark report with no failed benchmark.
	Passed bool `json:"passed"`
}

// Benchmark is one benchmark's result in one run.
type Benchmark struct {
	Name       string `json:"name"`
	Iterations int    `json:"iterations"`
	Status     Status `json:"status"`
	// Message is why a benchmark failed or skipped, when the harness says.
	Message string `json:"message,omitempty"`
	// NsPerOp is the harness's own figure: wall time per iteration.
	NsPerOp float64 `json:"ns_per_op"`
	// Metrics holds every other figure the harness reported, by unit as
	// the harness spells it: "B/op", "allocs/op", "MB/s", a custom
	// metric's unit; Google Benchmark's counters by name and its CPU time
	// per iteration as "cpu-ns/op".
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Find returns the named benchmark, or nil.
func (r *Run) Find(name string) *Benchmark {
	i, ok := slices.BinarySearchFunc(r.Benchmarks, name, func(b Benchmark, n string) int {
		return compareStrings(b.Name, n)
	})
	if !ok {
		return nil
	}
	return &r.Benchmarks[i]
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Why Parse refused an output; each error Parse returns wraps one of these
// (errors.Is) inside an errs.Invalid.
var (
	ErrNoBenchmarks = errors.New("no benchmarks")
	ErrDuplicate    = errors.New("a benchmark reported twice")
	ErrFailed       = errors.New("a benchmark failed")
	ErrIncomplete   = errors.New("the harness did not finish")
	ErrMalformed    = errors.New("malformed harness output")
	// ErrNotAlone: a run meant for one benchmark (CommandFor) ran another
	// one too, or not the one asked for.
	ErrNotAlone = errors.New("not the one benchmark asked for")
)

func refuse(kind error, format string, args ...any) error {
	return &errs.Error{Code: errs.Invalid, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// Parse reads one harness run's stdout. It refuses output with no
// benchmark, with a benchmark reported twice, with a failed benchmark or a
// failed harness (ErrFailed), or that stops before the harness's end. On
// ErrFailed it also returns the Run, so the caller can show which
// benchmarks failed and why; on any other error the Run is nil.
func Parse(format string, stdout []byte) (*Run, error) {
	if err := checkFormat(format); err != nil {
		return nil, err
	}
	var (
		run *Run
		err error
	)
	switch format {
	case Go:
		run, err = parseGo(stdout)
	case GoogleBenchmark:
		run, err = parseGoogle(stdout)
	default:
		return nil, errs.Invalidf("bench format %q has no harness output to read; its stdout is compared whole", format)
	}
	if err != nil {
		return nil, err
	}
	if err := run.check(); err != nil {
		if errors.Is(err, ErrFailed) {
			return run, err
		}
		return nil, err
	}
	return run, nil
}

// add records a benchmark, refusing a second one of the same name.
func (r *Run) add(b Benchmark) error {
	if r.Find(b.Name) != nil {
		return refuse(ErrDuplicate, "benchmark %.100q is reported twice; hone repeats runs itself, so the harness must run each benchmark once", b.Name)
	}
	i, _ := slices.BinarySearchFunc(r.Benchmarks, b.Name, func(x Benchmark, n string) int { return compareStrings(x.Name, n) })
	r.Benchmarks = slices.Insert(r.Benchmarks, i, b)
	return nil
}

func (r *Run) check() error {
	for _, b := range r.Benchmarks {
		if b.Status == Fail {
			msg := fmt.Sprintf("benchmark %.100q failed", b.Name)
			if b.Message != "" {
				msg += ": " + errs.ClipTo(b.Message, 200)
			}
			return refuse(ErrFailed, "%s", msg)
		}
	}
	if !r.Passed {
		return refuse(ErrFailed, "the harness reported a failure")
	}
	if len(r.Benchmarks) == 0 {
		return refuse(ErrNoBenchmarks, "the harness ran no benchmarks; check the bench command's benchmark filter")
	}
	return nil
}

// Fingerprint identifies what a run did, leaving out what it measured: the
// benchmarks by name, each one's iteration count and status, the harness's
// overall status, and the values of the metrics named in outputUnits (a
// custom metric the benchmark computes from its results, such as a
// checksum). Two runs of the same code on the same inputs have the same
// fingerprint however noisy their timings; a candidate that skips,
// renames or shortens a benchmark, or computes a different answer, does
// not. outputUnits must not name timings (ns/op, cpu-ns/op, MB/s), or the
// fingerprint moves with the noise.
func Fingerprint(run *Run, outputUnits []string) string {
	units := slices.Sorted(slices.Values(outputUnits))
	units = slices.Compact(units)
	h := sha256.New()
	fmt.Fprintf(h, "hone benchformat fingerprint 1\nformat %q\npassed %t\n", run.Format, run.Passed)
	for _, b := range run.Benchmarks {
		fmt.Fprintf(h, "benchmark %q %d %s\n", b.Name, b.Iterations, b.Status)
		for _, u := range units {
			if v, ok := b.Metrics[u]; ok {
				fmt.Fprintf(h, "\t%q %s\n", u, strconv.FormatFloat(v, 'g', -1, 64))
			} else {
				fmt.Fprintf(h, "\t%q absent\n", u)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CPUPerOp is the deciding figure of a run made with CommandFor(format,
// command, benchmark): the meter's CPU time of the run's whole process
// tree divided by the benchmark's iteration count, in nanoseconds. The run
// must hold that one benchmark, passed, and nothing else. The count is the
// one the harness reports, so compare the run's Fingerprint with the
// baseline's first: equal fingerprints mean equal counts.
func CPUPerOp(run *Run, benchmark string, cpu time.Duration) (float64, error) {
	if len(run.Benchmarks) != 1 || run.Benchmarks[0].Name != benchmark {
		names := make([]string, 0, len(run.Benchmarks))
		for _, b := range run.Benchmarks {
			names = append(names, b.Name)
		}
		return 0, refuse(ErrNotAlone, "the run for benchmark %.100q reported %s", benchmark, errs.ClipTo(fmt.Sprintf("%q", names), 300))
	}
	b := run.Benchmarks[0]
	if b.Status != Pass || b.Iterations <= 0 {
		return 0, refuse(ErrFailed, "benchmark %.100q did not pass (%s, %d iterations)", benchmark, b.Status, b.Iterations)
	}
	return float64(cpu.Nanoseconds()) / float64(b.Iterations), nil
}
