// Package benchformat reads what a target's own benchmark harness prints and
// tells hone how to run it so that its figures can be trusted.
//
// Three formats:
//
//   - process: the bench command is one workload; each run is one sample,
//     measured by the jail's meter. There is no harness output to read.
//   - go: `go test -bench` output (a test binary run with -test.bench, or
//     go test itself), read with golang.org/x/perf/benchfmt.
//   - google-benchmark: a Google Benchmark binary run with
//     --benchmark_format=json.
//
// # The deciding metric
//
// A harness's ns/op is wall time measured by the harness, inside the process
// the candidate's code runs in: it moves with the machine's load, and code
// under test can rewrite it. hone decides on what its own meter sees instead:
// each benchmark runs in a harness process of its own (CommandFor), with a
// fixed iteration count (Check), and the meter's CPU time of that process's
// whole tree, divided by the iteration count, is the benchmark's per-op CPU
// time (CPUPerOp). CPU time barely moves when other processes compete for
// the cores, and the count is fixed, so the same work costs the same on both
// sides. It also carries the harness process's start-up and the
// benchmark's set-up, spread over the iterations: pick a count that makes
// the loop dominate (a run of 100 ms or more).
//
// The harness's own figures (ns/op, B/op, allocs/op, custom metrics) are
// kept in the Run and reported, never decided on.
//
// # Names
//
// Go benchmarks keep their full name, "Benchmark" prefix and sub-benchmarks
// included ("BenchmarkDecode/size=1k"), without the "-N" GOMAXPROCS suffix
// Go appends to result lines: a trailing "-digits" is always taken to be
// that suffix, as benchstat does (so with GOMAXPROCS=1 a sub-benchmark named
// "utf-8" reads as "utf"). Google Benchmark names are kept as the library
// reports them ("BM_Parse/1024/threads:2").
package benchformat

import (
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// The formats a bench section may name.
const (
	Process         = "process"
	Go              = "go"
	GoogleBenchmark = "google-benchmark"
)

// Formats lists the valid formats, the default first.
func Formats() []string { return []string{Process, Go, GoogleBenchmark} }

func checkFormat(format string) error {
	for _, f := range Formats() {
		if format == f {
			return nil
		}
	}
	return errs.Invalidf("bench format %q is not one of %s", format, strings.Join(Formats(), ", "))
}
