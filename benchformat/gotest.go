package benchformat

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// parseGo reads `go test -bench` output. Result lines come from benchfmt;
// what benchfmt leaves out (which benchmarks failed or skipped, and whether
// the run got to its final PASS or FAIL) from the lines the testing package
// prints around them.
func parseGo(stdout []byte) (*Run, error) {
	st, err := goStatus(stdout)
	if err != nil {
		return nil, err
	}
	if !st.pass && !st.fail {
		return nil, refuse(ErrIncomplete, "the bench output ends before the harness's PASS or FAIL line: the harness crashed or was killed")
	}
	run := &Run{Format: Go, Passed: st.pass && !st.fail}
	rd := benchfmt.NewReader(bytes.NewReader(stdout), "stdout")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			b, err := goResult(rec)
			if err != nil {
				return nil, err
			}
			if err := run.add(b); err != nil {
				return nil, err
			}
		case *benchfmt.SyntaxError:
			return nil, refuse(ErrMalformed, "bench output %s (a benchmark that writes to stdout breaks its result line)", rec.Error())
		}
	}
	if err := rd.Err(); err != nil {
		return nil, refuse(ErrMalformed, "cannot read the bench output: %v", err)
	}
	for name, e := range st.ended {
		if b := run.Find(name); b != nil {
			if e.status == Fail {
				b.Status, b.Message = Fail, e.message
			}
			continue
		}
		if err := run.add(Benchmark{Name: name, Status: e.status, Message: e.message}); err != nil {
			return nil, err
		}
	}
	return run, nil
}

func goResult(r *benchfmt.Result) (Benchmark, error) {
	base, parts := r.Name.Parts()
	if n := len(parts); n > 0 && parts[n-1][0] == '-' {
		parts = parts[:n-1]
	}
	name := "Benchmark" + string(base) + string(bytes.Join(parts, nil))
	b := Benchmark{Name: name, Iterations: r.Iters, Status: Pass, NsPerOp: math.NaN()}
	for _, v := range r.Values {
		unit, val := v.Unit, v.Value
		if v.OrigUnit != "" {
			unit, val = v.OrigUnit, v.OrigValue
		}
		if unit == "ns/op" {
			b.NsPerOp = val
			continue
		}
		if b.Metrics == nil {
			b.Metrics = map[string]float64{}
		}
		if _, dup := b.Metrics[unit]; dup {
			return b, refuse(ErrMalformed, "benchmark %.100q reports %.40q twice", name, unit)
		}
		b.Metrics[unit] = val
	}
	if math.IsNaN(b.NsPerOp) {
		return b, refuse(ErrMalformed, "benchmark %.100q reports no ns/op", name)
	}
	return b, nil
}

type goEnd struct {
	status  Status
	message string
}

type goRunStatus struct {
	pass, fail bool
	ended      map[string]goEnd // failed or skipped benchmarks
}

// goStatus reads the testing package's own lines: "--- FAIL: Name" and
// "--- SKIP: Name" (indented for sub-benchmarks), and the final PASS, FAIL
// or go test's "ok"/"FAIL" package line. Their names never carry the
// GOMAXPROCS suffix. The log line that says why comes after the "---"
// line, more indented, or with -test.v before it.
func goStatus(stdout []byte) (goRunStatus, error) {
	st := goRunStatus{ended: map[string]goEnd{}}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var (
		pending       string // a benchmark whose reason may be on the next line
		pendingIndent int
		lastLog       string // the last log line since a line at the left margin
	)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trimmed)
		log := indent > 0 && trimmed != "" && !strings.HasPrefix(trimmed, "--- ")
		if log && pending != "" && indent > pendingIndent {
			st.ended[pending] = goEnd{status: st.ended[pending].status, message: strings.TrimSpace(trimmed)}
		}
		pending = ""
		switch {
		case log:
			lastLog = strings.TrimSpace(trimmed)
		case indent == 0 && !strings.HasPrefix(trimmed, "--- "):
			lastLog = ""
		}
		switch {
		case line == "PASS" || strings.HasPrefix(line, "ok  \t") || strings.HasPrefix(line, "ok \t"):
			st.pass = true
		case line == "FAIL" || strings.HasPrefix(line, "FAIL\t"):
			st.fail = true
		case strings.HasPrefix(trimmed, "--- FAIL: ") || strings.HasPrefix(trimmed, "--- SKIP: "):
			status := Fail
			if strings.HasPrefix(trimmed, "--- SKIP: ") {
				status = Skip
			} else {
				st.fail = true
			}
			name, _, _ := strings.Cut(trimmed[len("--- FAIL: "):], " ")
			if strings.HasPrefix(name, "Benchmark") {
				st.ended[name] = goEnd{status: status, message: lastLog}
				pending, pendingIndent = name, indent
			}
			lastLog = ""
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return st, refuse(ErrMalformed, "the bench output has a line longer than 1 MiB")
		}
		return st, refuse(ErrMalformed, "cannot read the bench output: %v", err)
	}
	return st, nil
}
