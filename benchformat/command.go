package benchformat

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/hone-perf/hone/internal/errs"
)

// flag is one harness flag found in a bench command.
type flag struct {
	name string // canonical: "benchtime" for -benchtime, -test.benchtime, --test.benchtime
	// testPrefix: spelled with "test." (the test binary's own spelling,
	// which go test accepts too).
	testPrefix bool
	value      string
	lit        bool  // value is known: no expansion in it
	words      []int // the flag's argument indices: the flag, and its value when separate
}

// harness is the one simple command in a bench command that runs the
// harness, and the harness flags in it.
type harness struct {
	words []word
	flags []flag
}

// last returns the flag's last occurrence (the one the harness obeys), or nil.
func (h *harness) last(name string) *flag {
	for i := len(h.flags) - 1; i >= 0; i-- {
		if h.flags[i].name == name {
			return &h.flags[i]
		}
	}
	return nil
}

// goValueFlags are the test flags hone reads or rewrites, and whether each
// takes a value.
var goValueFlags = map[string]bool{"bench": true, "benchtime": true, "count": true, "cpu": true, "run": true, "v": false, "json": false}

// goFlags finds the testing package's flags in one simple command: a test
// binary's -test.* flags, or for `go test` also the unprefixed ones, up to
// -args (after which go test hands the words to the binary as they are).
// A `--` ends the flags.
func goFlags(ws []word) []flag {
	goTest := isGoTest(ws)
	start, binary := 1, !goTest
	if goTest {
		start = 2
	}
	var out []flag
	for i := start; i < len(ws); i++ {
		w := ws[i]
		if w.lit && w.text == "--" {
			break
		}
		if goTest && w.lit && (w.text == "-args" || w.text == "--args") {
			binary = true
			continue
		}
		if !strings.HasPrefix(w.text, "-") {
			continue
		}
		name, value, eq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w.text, "-"), "-"), "=")
		prefixed := strings.HasPrefix(name, "test.")
		if binary && !prefixed {
			continue
		}
		canon := strings.TrimPrefix(name, "test.")
		takesValue, known := goValueFlags[canon]
		if !known {
			continue
		}
		f := flag{name: canon, testPrefix: prefixed, value: value, lit: w.lit, words: []int{i}}
		if takesValue && !eq && i+1 < len(ws) {
			i++
			f.value, f.lit, f.words = ws[i].text, ws[i].lit, append(f.words, i)
		}
		out = append(out, f)
	}
	return out
}

// isGoTest reports a `go test` command, as opposed to a test binary.
func isGoTest(ws []word) bool {
	return len(ws) > 1 && ws[0].lit && (ws[0].text == "go" || strings.HasSuffix(ws[0].text, "/go")) && ws[1].lit && ws[1].text == "test"
}

// googleFlags finds Google Benchmark's flags, which it reads anywhere on
// its command line, only as --benchmark_NAME=VALUE.
func googleFlags(ws []word) []flag {
	var out []flag
	for i, w := range ws[1:] {
		rest, ok := strings.CutPrefix(w.text, "--benchmark_")
		if !ok {
			continue
		}
		name, value, _ := strings.Cut(rest, "=")
		out = append(out, flag{name: name, value: value, lit: w.lit, words: []int{i + 1}})
	}
	return out
}

// The flag that fixes the iteration count, per format, and how to spell it
// in a message.
var (
	iterationFlag = map[string]string{Go: "benchtime", GoogleBenchmark: "min_time"}
	iterationHelp = map[string]string{
		Go:              "add -test.benchtime=Nx (or -benchtime=Nx through go test), for example -test.benchtime=1000x",
		GoogleBenchmark: "add --benchmark_min_time=Nx (Google Benchmark 1.8 or later), for example --benchmark_min_time=1000x",
	}
	fixedCount = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]*x$`) })
)

// findHarness returns the one simple command that sets the iteration flag.
func findHarness(format, command string) (*harness, error) {
	cs, err := calls(command)
	if err != nil {
		return nil, err
	}
	var found []*harness
	for _, ws := range cs {
		h := &harness{words: ws}
		if format == Go {
			h.flags = goFlags(ws)
		} else {
			h.flags = googleFlags(ws)
		}
		if h.last(iterationFlag[format]) != nil {
			found = append(found, h)
		}
	}
	switch len(found) {
	case 0:
		return nil, errs.Invalidf("the bench command must fix each benchmark's iteration count, since an adaptive count changes with the code: %s", iterationHelp[format])
	case 1:
		return found[0], nil
	}
	return nil, errs.Invalidf("the bench command runs %d harnesses; hone needs exactly one harness invocation", len(found))
}

// Check refuses a bench command whose harness would not give comparable
// runs: the iteration count must be fixed (an adaptive count changes with
// the code), each benchmark must run once (hone repeats runs itself, by
// interleaving), and the output must be in the format hone reads. The
// error is one line saying what to add or remove.
func Check(format, command string) error {
	if err := checkFormat(format); err != nil {
		return err
	}
	if strings.TrimSpace(command) == "" {
		return errs.Invalidf("the bench command is empty")
	}
	if format == Process {
		return nil
	}
	h, err := findHarness(format, command)
	if err != nil {
		return err
	}
	if format == Go {
		return checkGo(h)
	}
	return checkGoogle(h)
}

func checkGo(h *harness) error {
	bt := h.last("benchtime")
	if !bt.lit {
		return errs.Invalidf("write the value of -benchtime out in the bench command, without expansions: %s", iterationHelp[Go])
	}
	if !fixedCount().MatchString(bt.value) {
		return errs.Invalidf("-benchtime=%.40s adapts the iteration count to the code's speed: %s", bt.value, iterationHelp[Go])
	}
	if h.last("bench") == nil {
		return errs.Invalidf("the bench command runs no benchmarks: add -test.bench=. (or -bench=. through go test)")
	}
	if c := h.last("count"); c != nil && (!c.lit || c.value != "1") {
		return errs.Invalidf("remove -count=%.40s from the bench command: hone repeats runs itself", c.value)
	}
	if c := h.last("cpu"); c != nil && (!c.lit || strings.Contains(c.value, ",")) {
		return errs.Invalidf("-cpu=%.40s runs each benchmark more than once: give one value or none", c.value)
	}
	for _, f := range h.flags {
		if f.name == "json" || (f.name == "v" && strings.Contains(f.value, "test2json")) {
			return errs.Invalidf("remove -json from the bench command: hone reads go test's text output")
		}
	}
	return nil
}

func checkGoogle(h *harness) error {
	mt := h.last("min_time")
	if !mt.lit {
		return errs.Invalidf("write the value of --benchmark_min_time out in the bench command, without expansions: %s", iterationHelp[GoogleBenchmark])
	}
	if !fixedCount().MatchString(mt.value) {
		return errs.Invalidf("--benchmark_min_time=%.40s adapts the iteration count to the code's speed: %s", mt.value, iterationHelp[GoogleBenchmark])
	}
	if f := h.last("format"); f == nil || !f.lit || f.value != "json" {
		return errs.Invalidf("add --benchmark_format=json to the bench command: hone reads Google Benchmark's JSON report")
	}
	if r := h.last("repetitions"); r != nil && (!r.lit || r.value != "1") {
		return errs.Invalidf("remove --benchmark_repetitions=%.40s from the bench command: hone repeats runs itself", r.value)
	}
	if w := h.last("min_warmup_time"); w != nil && (!w.lit || strings.Trim(w.value, "0.s") != "") {
		return errs.Invalidf("remove --benchmark_min_warmup_time=%.40s from the bench command: a warm-up of fixed time costs the same CPU on both sides and hides the difference", w.value)
	}
	return nil
}

// Warnings lists what makes an accepted bench command measure more than
// the benchmark, one line each, for the user to fix: `go test` compiles,
// links and vets the package in every run (in a fresh jail, with a cold
// build cache), and all of that lands in the per-benchmark CPU time.
func Warnings(format, command string) []string {
	if format != Go || Check(format, command) != nil {
		return nil
	}
	h, err := findHarness(format, command)
	if err != nil || !isGoTest(h.words) {
		return nil
	}
	return []string{"the bench command runs go test, which builds the package in every run, and that CPU time is measured too: " +
		"build the test binary once (go test -c -o $HONE_OUT/pkg.test ./pkg) and run it (-test.bench=. -test.benchtime=Nx)"}
}

// CommandFor returns the bench command rewritten to run one benchmark (a
// name from Parse) in a harness process of its own: the benchmark filter
// is replaced by one that selects that benchmark alone, inserted next to
// the iteration flag so the harness reads it wherever the user put that
// flag. For Go, -test.run='^$' keeps tests out of the measurement. The
// rest of the command is left as written.
func CommandFor(format, command, benchmark string) (string, error) {
	return commandAt(format, command, benchmark, 0)
}

// CommandAt is CommandFor with the iteration count set to iterations in
// place of the one the command fixes: hone runs each benchmark at counts
// of its own choosing (see Iterations).
func CommandAt(format, command, benchmark string, iterations int) (string, error) {
	if iterations <= 0 {
		return "", errs.Invalidf("an iteration count must be positive, not %d", iterations)
	}
	return commandAt(format, command, benchmark, iterations)
}

// Iterations returns the iteration count the bench command fixes (the N
// of -test.benchtime=Nx or --benchmark_min_time=Nx).
func Iterations(format, command string) (int, error) {
	if err := Check(format, command); err != nil {
		return 0, err
	}
	if format == Process {
		return 0, errs.Invalidf("the %s format has no iteration count", Process)
	}
	h, err := findHarness(format, command)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(h.last(iterationFlag[format]).value, "x"))
	if err != nil || n <= 0 {
		return 0, errs.Invalidf("the iteration count %.40q is not a positive number: %s", h.last(iterationFlag[format]).value, iterationHelp[format])
	}
	return n, nil
}

// commandAt is CommandFor, and with iterations > 0 CommandAt.
func commandAt(format, command, benchmark string, iterations int) (string, error) {
	if err := Check(format, command); err != nil {
		return "", err
	}
	if format == Process {
		return "", errs.Invalidf("the %s format runs the bench command whole; it has no benchmarks to select", Process)
	}
	if benchmark == "" || !utf8.ValidString(benchmark) || strings.ContainsFunc(benchmark, unicode.IsControl) {
		return "", errs.Invalidf("benchmark name %.100q is not a name Parse returns", benchmark)
	}
	h, err := findHarness(format, command)
	if err != nil {
		return "", err
	}
	var (
		remove = map[string]bool{"filter": true}
		insert string
	)
	it := h.last(iterationFlag[format])
	if format == Go {
		remove = map[string]bool{"bench": true, "run": true}
		dash := "-"
		if it.testPrefix {
			dash = "-test."
		}
		insert = " " + dash + "bench=" + quote(goFilter(benchmark)) + " " + dash + "run=" + quote("^$")
	} else {
		insert = " --benchmark_filter=" + quote("^"+quoteERE(benchmark)+"$")
	}
	last := h.words[it.words[len(it.words)-1]]
	edits := []edit{{start: last.end, end: last.end, text: insert}}
	if iterations > 0 {
		// The count's word is replaced whole (with the flag, when the value
		// is in the same word), which also drops any quoting it had.
		count := strconv.Itoa(iterations) + "x"
		if len(it.words) == 1 {
			count = flagSpelling(format, it) + "=" + count
		}
		edits[0] = edit{start: last.start, end: last.end, text: count + insert}
	}
	for _, f := range h.flags {
		if !remove[f.name] {
			continue
		}
		for _, i := range f.words {
			// Each word goes with the blank before it.
			edits = append(edits, edit{start: h.words[i-1].end, end: h.words[i].end})
		}
	}
	return apply(command, edits), nil
}

// flagSpelling is the iteration flag as hone writes it back.
func flagSpelling(format string, it *flag) string {
	switch {
	case format == GoogleBenchmark:
		return "--benchmark_" + it.name
	case it.testPrefix:
		return "-test." + it.name
	}
	return "-" + it.name
}

// goFilter is a -test.bench pattern that matches the named benchmark
// alone: the testing package splits the pattern at slashes and matches
// each part against one level of the name. The last level may carry
// digits that Parse took for the GOMAXPROCS suffix (see the package
// comment), so it matches with or without them.
func goFilter(name string) string {
	levels := strings.Split(name, "/")
	for i, l := range levels {
		levels[i] = "^" + regexp.QuoteMeta(l) + "$"
	}
	last := len(levels) - 1
	levels[last] = strings.TrimSuffix(levels[last], "$") + "(-[0-9]+)?$"
	return strings.Join(levels, "/")
}

// quoteERE escapes the characters special in a POSIX extended or
// ECMAScript regular expression, the two kinds Google Benchmark's filter
// may be compiled as.
func quoteERE(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.^$|()[]{}*+?`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
