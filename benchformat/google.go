package benchformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
)

// googleReport is Google Benchmark's --benchmark_format=json document. The
// context (date, host, load average) is left out: none of it is a result.
type googleReport struct {
	Benchmarks []map[string]json.RawMessage `json:"benchmarks"`
}

// googleFields are the keys of a benchmark entry that are not counters.
var googleFields = map[string]bool{
	"name": true, "run_name": true, "run_type": true, "family_index": true,
	"per_family_instance_index": true, "repetitions": true, "repetition_index": true,
	"threads": true, "iterations": true, "real_time": true, "cpu_time": true,
	"time_unit": true, "error_occurred": true, "error_message": true,
	"skipped": true, "skip_message": true, "label": true,
	"aggregate_name": true, "aggregate_unit": true,
}

var googleUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

// parseGoogle reads a Google Benchmark JSON report. stdout must be that
// document alone: a benchmark that prints to stdout corrupts it.
func parseGoogle(stdout []byte) (*Run, error) {
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var rep googleReport
	if err := dec.Decode(&rep); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, refuse(ErrIncomplete, "the JSON report ends early: the harness crashed or was killed, or was not run with --benchmark_format=json")
		}
		return nil, refuse(ErrMalformed, "stdout is not Google Benchmark's JSON report (does a benchmark print to stdout?): %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, refuse(ErrMalformed, "stdout holds more than the JSON report (does a benchmark print to stdout?)")
	}
	run := &Run{Format: GoogleBenchmark, Passed: true}
	for i, raw := range rep.Benchmarks {
		b, err := googleBenchmark(raw)
		if err != nil {
			return nil, refuse(ErrMalformed, "benchmark %d of the JSON report: %v", i+1, err)
		}
		if b.Status == Fail {
			run.Passed = false
		}
		if err := run.add(b); err != nil {
			return nil, err
		}
	}
	return run, nil
}

type googleEntryError string

func (e googleEntryError) Error() string { return string(e) }

func googleBenchmark(raw map[string]json.RawMessage) (Benchmark, error) {
	var e struct {
		Name, RunName, RunType, TimeUnit, ErrorMessage, SkipMessage string
		Iterations                                                  int
		RealTime, CPUTime                                           float64
		ErrorOccurred, Skipped                                      bool
	}
	for key, dst := range map[string]any{
		"name": &e.Name, "run_name": &e.RunName, "run_type": &e.RunType, "time_unit": &e.TimeUnit,
		"error_message": &e.ErrorMessage, "skip_message": &e.SkipMessage, "iterations": &e.Iterations,
		"real_time": &e.RealTime, "cpu_time": &e.CPUTime, "error_occurred": &e.ErrorOccurred, "skipped": &e.Skipped,
	} {
		if v, ok := raw[key]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return Benchmark{}, googleEntryError(key + " is not what Google Benchmark writes")
			}
		}
	}
	name := e.RunName
	if name == "" {
		name = e.Name
	}
	if name == "" {
		return Benchmark{}, googleEntryError("no name")
	}
	if e.RunType == "aggregate" {
		return Benchmark{}, googleEntryError("an aggregate (" + clipName(e.Name) + "): hone repeats runs itself, so drop --benchmark_repetitions and Repetitions()")
	}
	b := Benchmark{Name: name, Iterations: e.Iterations, Status: Pass}
	switch {
	case e.ErrorOccurred:
		b.Status, b.Message = Fail, e.ErrorMessage
		return b, nil
	case e.Skipped:
		b.Status, b.Message = Skip, e.SkipMessage
		return b, nil
	}
	scale, ok := googleUnits[e.TimeUnit]
	if !ok {
		return Benchmark{}, googleEntryError("time_unit " + clipName(e.TimeUnit) + " is unknown")
	}
	b.NsPerOp = e.RealTime * scale
	b.Metrics = map[string]float64{"cpu-ns/op": e.CPUTime * scale}
	for key, v := range raw {
		if googleFields[key] {
			continue
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return Benchmark{}, googleEntryError("counter " + clipName(key) + " is not a number")
		}
		b.Metrics[key] = x
	}
	return b, nil
}

func clipName(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
