package workspace

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

const validConfig = `# a full example
[ledger]
branch    = "hone/ledger"
notes_ref = "refs/notes/hone"

[bench]
metric = "instructions"
pairs  = 5

[targets.wordfreq]
path    = "targets/wordfreq"
pin     = "main"
protect = ["testdata/**", "**/*_test.go"]
build   = "go build -o $HONE_OUT/wordfreq ."

  [[targets.wordfreq.gates]]
  name    = "unit"
  run     = "go test ./..."
  timeout = "2m"

  [[targets.wordfreq.gates]]
  name        = "golden"
  run         = "$HONE_OUT/wordfreq words.txt"
  equivalence = true

  [targets.wordfreq.bench]
  run       = "$HONE_OUT/wordfreq words.txt"
  threshold = 0.05
`

func TestParseValid(t *testing.T) {
	c, err := Parse("hone.toml", []byte(validConfig))
	if err != nil {
		t.Fatal(err)
	}
	// Without [guard] refs, the refs agents push to are still guarded.
	if len(c.Guard.Refs) != 1 || c.Guard.Refs[0] != "refs/heads/agent/<target>/*" {
		t.Errorf("default guard refs = %v", c.Guard.Refs)
	}
	tg := c.Targets["wordfreq"]
	if tg == nil || tg.Name != "wordfreq" || tg.Path != "targets/wordfreq" || tg.Pin != "main" {
		t.Fatalf("target = %+v", tg)
	}
	if len(tg.Gates) != 2 || tg.Gates[0].Timeout.Minutes() != 2 || tg.Gates[1].Timeout.Duration != DefaultGateTimeout || !tg.Gates[1].Equivalence {
		t.Errorf("gates = %+v", tg.Gates)
	}
	// The target's bench inherits the workspace [bench] and overrides threshold.
	if b := tg.Bench; b.Metric != "instructions" || b.Pairs != 5 || b.Threshold != 0.05 || b.MaxPairs != DefaultBench.MaxPairs {
		t.Errorf("bench = %+v", b)
	}
	if got := c.Line("targets", "wordfreq", "bench", "threshold"); got != 28 {
		t.Errorf("Line(threshold) = %d, want 28", got)
	}
}

// A harness target keeps its format keys, decides on cpu-time whatever the
// workspace's metric, and a go test command that rebuilds the package in
// every run is accepted with a warning naming its line.
func TestParseHarnessBench(t *testing.T) {
	c, err := Parse("hone.toml", []byte(`[bench]
metric = "instructions"
[targets.a.bench]
format = "go"
run = "go test -bench=. -benchtime=100x ./..."
benchmarks = ["BenchmarkA", "BenchmarkB/n=10"]
outputs = ["checksum"]
[targets.b.bench]
run = "./b"
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Targets["a"].Bench, c.Targets["b"].Bench
	if a.Format != "go" || a.Metric != MetricCPUTime || !reflect.DeepEqual(a.Benchmarks, []string{"BenchmarkA", "BenchmarkB/n=10"}) || !reflect.DeepEqual(a.Outputs, []string{"checksum"}) {
		t.Errorf("harness bench %+v", a)
	}
	if b.Format != "process" || b.Metric != MetricInstructions {
		t.Errorf("process bench %+v", b)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Message, "hone.toml:5: targets.a.bench.run: the bench command runs go test") {
		t.Errorf("warnings %+v", c.Warnings)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("hone.toml", []byte("[targets.a]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Targets["a"]
	if a.Path != "targets/a" || a.Pin != "HEAD" || !reflect.DeepEqual(a.Bench, DefaultBench) || c.Ledger.Branch != DefaultLedgerBranch {
		t.Errorf("defaults not applied: %+v %+v", a, c.Ledger)
	}
}

// Every bad file is an Invalid error (exit 5) whose message names the line
// and the key, so the user knows what to fix.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, toml string
		want       string // substring of the message, starting with "hone.toml:LINE:"
	}{
		{"unknown top-level key", "colour = 1\n", `hone.toml:1: unknown key "colour"`},
		{"allowed signers outside the repository", "[ledger]\nallowed_signers = \"../keys\"\n", `hone.toml:2: ledger.allowed_signers: "../keys" must be a clean path relative`},
		{"guard base not a ref", "[guard]\nbase = [\"main\"]\n", `hone.toml:2: guard.base: "main" must be a full ref name`},
		{"unknown table", "[bench]\npairs = 3\n[benchmark]\n", `hone.toml:3: unknown key "benchmark"`},
		{"unknown key in target", "[targets.a]\npath = \"x\"\npinn = \"main\"\n", `hone.toml:3: unknown key "targets.a.pinn"`},
		{"unknown key in target bench", "[targets.a]\n\n[targets.a.bench]\nrun = \"x\"\nmetrik = \"wall\"\n", `hone.toml:5: unknown key "targets.a.bench.metrik"`},
		{"unknown key in second gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\ntimout = \"1m\"\n", `hone.toml:8: unknown key "targets.a.gates.timout"`},
		{"unknown key in third gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nrun = \"z\"\ntimout = \"1m\"\n", `hone.toml:11: unknown key "targets.a.gates.timout"`},
		{"bad value in third gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nseeds = 5\nrun = \"z\"\n", `hone.toml:8: targets.a.gates: gate "w" sets seeds but no generate command`},
		{"wrong type in third gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nrun = \"z\"\nseeds = \"many\"\n", `hone.toml:11: targets.a.gates.seeds: wrong type: want an integer, got a string`},
		{"wrong element type in third gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nrun = \"z\"\nsanitize = [\"address\", 1]\n", `hone.toml:11: targets.a.gates.sanitize: wrong type: want a string, got an integer`},
		{"bad duration in third gate", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nrun = \"z\"\n\ntimeout = \"soon\"\n", `hone.toml:12: targets.a.gates.timeout: not a duration`},
		{"unknown key in an inline table", "[targets.a]\nbench = { metric = \"wall\", metrik = 1 }\n", `hone.toml:2: unknown key "targets.a.bench.metrik"`},
		{"wrong type in an inline table", "bench = {\n  pairs = \"x\" }\n", `hone.toml:2: bench.pairs: wrong type: want an integer, got a string`},
		{"date for a string in third gate", "[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"v\"\nrun = \"y\"\n[[targets.a.gates]]\nname = \"w\"\nrun = 1979-05-27\n", `hone.toml:9: targets.a.gates.run: wrong type: want a string, got a date`},
		{"unknown key indented with comment header", "[targets.a] # the target\n  [targets.a.profile]  # how\n  freq = 99\n", `hone.toml:3: unknown key "targets.a.profile.freq"`},
		{"unknown dotted key", "[targets.a]\nbench.metrik = \"wall\"\n", `hone.toml:2: unknown key "targets.a.bench.metrik"`},
		{"unknown key in quoted table", "[targets.\"a\"]\nnope = 1\n", `hone.toml:2: unknown key "targets.a.nope"`},
		{"unknown key after multi-line string", "[targets.a]\nbuild = \"\"\"\nnope = 1\n\"\"\"\nnope = 2\n", `hone.toml:5: unknown key "targets.a.nope"`},
		{"wrong type int for string", "[targets.a]\npath = 5\n", `hone.toml:2: targets.a.path: wrong type: want a string, got an integer`},
		{"wrong type string for int", "[bench]\npairs = \"ten\"\n", `hone.toml:2: bench.pairs: wrong type: want an integer, got a string`},
		{"wrong type string for array", "[targets.a]\nprotect = \"x\"\n", `hone.toml:2: targets.a.protect: wrong type`},
		{"targets not a table", "targets = 5\n", `hone.toml:1: targets: must be a table`},
		{"targets as array of tables", "[[targets]]\nname = \"a\"\n", `hone.toml:1: targets: must be a table ([targets]), not an array of tables`},
		{"date for a string", "[targets.a]\npin = 2024-01-01\n", `hone.toml:2: targets.a.pin: wrong type`},
		{"gate not a table", "[targets.a]\ngates = [1]\n", `hone.toml:2: targets.a.gates: wrong type: want a table, got an integer`},
		{"target not a table", "[targets]\na = \"x\"\n", `hone.toml:2: targets.a: must be a table`},
		{"gates not an array of tables", "[targets.a]\ngates = \"x\"\n", `hone.toml:2: targets.a.gates: must be an array of tables`},
		{"bad duration", "[targets.a]\n[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\ntimeout = \"soon\"\n", `hone.toml:5: targets.a.gates.timeout: not a duration`},
		{"syntax error", "[targets.a\n", `hone.toml:1: expected ']' to close table name`},
		{"bad target name", "[targets.\"a b\"]\n", `hone.toml:1: targets."a b": target name "a b" may only use`},
		{"bad target name slash", "[targets.\"a/b\"]\n", `may only use letters`},
		{"absolute path", "[targets.a]\npath = \"/etc\"\n", `hone.toml:2: targets.a.path: must be relative`},
		{"dotdot path", "[targets.a]\npath = \"targets/../../x\"\n", `hone.toml:2: targets.a.path: must not contain '..'`},
		{"leading dotdot", "[targets.a]\npath = \"../x\"\n", `targets.a.path: must not contain '..'`},
		{"top level path without files", "[targets.a]\npath = \"./\"\n", `targets.a.path: names the repository's top level: a target there needs files = [...]`},
		{"signers a target may change", "[ledger]\nallowed_signers = \"keys/signers\"\n[targets.a]\npath = \".\"\nfiles = [\"keys/*\"]\n", `hone.toml:2: ledger.allowed_signers: "keys/signers" is a file target "a" may change`},
		{"path into .git", "[targets.a]\npath = \".GIT/hooks\"\n", `targets.a.path: must not point into .git`},
		{"path into .git by its short name", "[targets.a]\npath = \"t/git~1/hooks\"\n", `targets.a.path: must not point into .git`},
		{"path into .git with a trailing dot", "[targets.a]\npath = \"t/.git./x\"\n", `targets.a.path: must not point into .git`},
		{"bad metric", "[bench]\nmetric = \"speed\"\n", `hone.toml:2: bench.metric: "speed" is not a metric; use instructions, cpu-time or wall`},
		{"threshold too big", "[targets.a.bench]\nthreshold = 1.5\n", `hone.toml:2: targets.a.bench.threshold: must be in [0, 1)`},
		{"max_pairs below pairs", "[bench]\npairs = 10\nmax_pairs = 5\n", `hone.toml:3: bench.max_pairs: must be at least pairs`},
		{"max_speedup of 1", "[bench]\nmax_speedup = 1.0\n", `hone.toml:2: bench.max_speedup: must be more than 1`},
		{"max_loop too short", "[bench]\nmax_loop = \"10ms\"\n", `hone.toml:2: bench.max_loop: must be from 50ms to 10s of CPU time per run`},
		{"max_loop too long", "[targets.a.bench]\nformat = \"go\"\nrun = \"./b.test -test.bench=. -test.benchtime=10x\"\nmax_loop = \"1m\"\n", `hone.toml:4: targets.a.bench.max_loop: must be from 50ms to 10s`},
		{"max_loop for a process", "[targets.a.bench]\nrun = \"x\"\nmax_loop = \"100ms\"\n", `hone.toml:3: targets.a.bench.max_loop: needs a benchmark harness`},
		{"bench run at top", "[bench]\nrun = \"x\"\n", `hone.toml:2: bench.run: the workload is per target`},
		{"bench format at top", "[bench]\nformat = \"go\"\n", `hone.toml:2: bench.format: the workload is per target`},
		{"unknown bench format", "[targets.a.bench]\nrun = \"x\"\nformat = \"junit\"\n", `hone.toml:3: targets.a.bench.format: must be one of process, go, google-benchmark, not "junit"`},
		{"go bench with an adaptive count", "[targets.a.bench]\nformat = \"go\"\n\nrun = \"./b.test -test.bench=. -test.benchtime=2s\"\n", `hone.toml:4: targets.a.bench.run: -benchtime=2s adapts the iteration count`},
		{"go bench without a count", "[targets.a.bench]\nformat = \"go\"\nrun = \"./b.test -test.bench=.\"\n", `hone.toml:3: targets.a.bench.run:`},
		{"google benchmark without json", "[targets.a.bench]\nformat = \"google-benchmark\"\nrun = \"./b --benchmark_min_time=100x\"\n", `hone.toml:3: targets.a.bench.run: add --benchmark_format=json`},
		{"timing unit as an output", "[targets.a.bench]\nformat = \"go\"\nrun = \"./b.test -test.bench=. -test.benchtime=10x\"\noutputs = [\"sum\", \"MB/s\"]\n", `hone.toml:4: targets.a.bench.outputs: unit 2 ("MB/s") is a timing`},
		{"benchmarks for a process", "[targets.a.bench]\nrun = \"x\"\nbenchmarks = [\"BenchmarkA\"]\n", `hone.toml:3: targets.a.bench.benchmarks: needs a benchmark harness`},
		{"repeated benchmark", "[targets.a.bench]\nformat = \"go\"\nrun = \"./b.test -test.bench=. -test.benchtime=10x\"\nbenchmarks = [\"BenchmarkA\", \"BenchmarkA\"]\n", `hone.toml:4: targets.a.bench.benchmarks: name 2 ("BenchmarkA") is empty or repeated`},
		{"harness on instructions", "[targets.a.bench]\nformat = \"go\"\nmetric = \"instructions\"\nrun = \"./b.test -test.bench=. -test.benchtime=10x\"\n", `hone.toml:3: targets.a.bench.metric: a go harness is decided by cpu-time per iteration`},
		{"gate without name", "[targets.a]\n[[targets.a.gates]]\nrun = \"x\"\n", `hone.toml:2: targets.a.gates: gate 1 has no name`},
		{"duplicate gate", "[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\n[[targets.a.gates]]\nname = \"u\"\nrun = \"y\"\n", `gate name "u" is used twice`},
		{"gate name with a space", "[[targets.a.gates]]\nname = \"my gate\"\nrun = \"x\"\n", `hone.toml:1: targets.a.gates: gate name "my gate" may only use letters`},
		{"gate named build", "[[targets.a.gates]]\nname = \"build\"\nrun = \"x\"\n", `gate name "build" is the verdict's own row for the build`},
		{"unknown sanitizer", "[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\nsanitize = [\"memory\"]\n", `targets.a.gates: gate "u": sanitize: sanitizer "memory" is not one of address, undefined, leak, thread`},
		{"empty sanitize list", "[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\nsanitize = []\n", `gate "u": sanitize: the sanitize list is empty`},
		{"thread with address", "[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\nsanitize = [\"thread\", \"address\"]\n", `cannot be combined`},
		{"seeds without generate", "[[targets.a.gates]]\nname = \"d\"\nrun = \"x\"\nseeds = 10\n", `gate "d" sets seeds but no generate command`},
		{"negative seeds", "[[targets.a.gates]]\nname = \"d\"\nrun = \"x\"\ngenerate = \"g\"\nseeds = -1\n", `gate "d": seeds must be between 1 and 1000000, not -1`},
		{"blank generate", "[[targets.a.gates]]\nname = \"d\"\nrun = \"x\"\ngenerate = \" \"\n", `gate "d": generate is blank`},
		{"bad gate log size", "[ledger]\ngate_log_size = \"1KiB\"\n", `hone.toml:2: ledger.gate_log_size: "1KiB" is too small`},
		{"gate log size not a size", "[ledger]\ngate_log_size = \"big\"\n", `hone.toml:2: ledger.gate_log_size: "big" is not a size`},
		{"protect escapes", "[targets.a]\nprotect = [\"../x\"]\n", `hone.toml:2: targets.a.protect: pattern 1`},
		{"negation in protect", "[targets.a]\n\nprotect = [\"x\", \"!json.c\"]\n", "hone.toml:3: targets.a.protect: pattern 2 (\"!json.c\"): negation is not supported; list the files to allow in `files`"},
		{"negation in files", "[targets.a]\nfiles = [\"!json.c\"]\n", "hone.toml:2: targets.a.files: pattern 1 (\"!json.c\"): negation is not supported"},
		{"empty files", "[targets.a]\nfiles = []\n", `hone.toml:2: targets.a.files: is empty, which would allow no change at all`},
		{"bad glob in files", "[targets.a]\nfiles = [\"src/[a-\"]\n", `hone.toml:2: targets.a.files: pattern 1 ("src/[a-"): not a valid glob`},
		{"star star inside a segment", "[targets.a]\nfiles = [\"**.c\"]\n", `hone.toml:2: targets.a.files: pattern 1 ("**.c"): ** inside a segment`},
		{"absolute files glob", "[targets.a]\nfiles = [\"/json.c\"]\n", `hone.toml:2: targets.a.files: pattern 1 ("/json.c"): absolute`},
		{"bad network", "[sandbox]\nnetwork = \"maybe\"\n", `hone.toml:2: sandbox.network: must be "deny" or "allow"`},
		{"bad isolation", "[sandbox]\nisolation = \"none\"\n", `hone.toml:2: sandbox.isolation: must be "full" or "weak", not "none"`},
		{"relative read_only", "[sandbox]\nread_only = [\"opt/go\"]\n", `hone.toml:2: sandbox.read_only: "opt/go" must be an absolute, clean path`},
		{"root read_only", "[sandbox]\nread_only = [\"/\"]\n", `sandbox.read_only: "/" must be an absolute, clean path below /`},
		{"bad cache size", "[sandbox]\ncache_size = \"lots\"\n", `hone.toml:2: sandbox.cache_size: "lots" is not a size`},
		{"pprof without output", "[targets.a.profile]\nformat = \"pprof\"\n", `hone.toml:1: targets.a.profile.output: format = "pprof" needs output`},
		{"notes ref", "[ledger]\nnotes_ref = \"refs/heads/x\"\n", `hone.toml:2: ledger.notes_ref: must start with refs/notes/`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("hone.toml", []byte(tt.toml))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.toml)
			}
			if code := errs.CodeOf(err); code != errs.Invalid {
				t.Errorf("code = %v, want Invalid (5)", code)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestKeyLine(t *testing.T) {
	src := []byte("a = 1\n[t . 'x y'.\"z\"]\nk = \"\"\"\nq = 2\n\"\"\"\nq = 3\n[[arr]]\nv = 1\n[[arr]]\nw = 2\n")
	tests := []struct {
		key  []string
		want int
	}{
		{[]string{"a"}, 1},
		{[]string{"t", "x y", "z"}, 2},
		{[]string{"t", "x y", "z", "q"}, 6},
		{[]string{"t"}, 2}, // implicit table: the first line below it
		{[]string{"arr", "w"}, 10},
		{[]string{"arr"}, 7},
		{[]string{"missing"}, 0},
		{[]string{"a", "b"}, 1}, // absent: its parent's line
	}
	for _, tt := range tests {
		if got := keyLine(src, tt.key); got != tt.want {
			t.Errorf("keyLine(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
	for i, want := range []int{7, 9, 7} { // an element the file lacks: the array's first line
		if got := itemLine(src, keyPath{"arr"}, i); got != want {
			t.Errorf("itemLine(arr, %d) = %d, want %d", i, got, want)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts has valid target names
// and relative paths.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validConfig))
	f.Add([]byte("[targets.a]\npath = \"x\"\n"))
	f.Add([]byte("targets = 5\n"))
	f.Add([]byte("[[targets.a.gates]]\nname = \"u\"\nrun = \"x\"\ntimeout = \"1s\"\n"))
	f.Add([]byte("[targets.\"a\\\"b\"]\nx.y.z = '''\n'''\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("hone.toml", data)
		if err != nil {
			if errs.CodeOf(err) != errs.Invalid {
				t.Fatalf("error without the Invalid code: %v", err)
			}
			return
		}
		for name, tg := range c.Targets {
			if !targetNameRE().MatchString(name) || checkRelPath(tg.Path) != nil {
				t.Fatalf("accepted target %q with path %q", name, tg.Path)
			}
		}
		keyPositions(data)
	})
}

// The file `hone init` writes parses, with and without a target, and a
// template target gets exactly the values it was given.
func TestInitialConfigParses(t *testing.T) {
	for _, tt := range []struct{ target, path, pin string }{{"", "", ""}, {"wf", "", "main"}, {"x", "src/x", ""}} {
		c, err := Parse("hone.toml", InitialConfig(tt.target, tt.path, tt.pin, nil))
		if err != nil {
			t.Fatalf("InitialConfig(%q, %q, %q): %v", tt.target, tt.path, tt.pin, err)
		}
		if tt.target == "" {
			if len(c.Targets) != 0 {
				t.Errorf("targets without --target: %v", c.Targets)
			}
			continue
		}
		got := c.Targets[tt.target]
		wantPath := tt.path
		if wantPath == "" {
			wantPath = "targets/" + tt.target
		}
		if got == nil || got.Path != wantPath || (tt.pin != "" && got.Pin != tt.pin) || !reflect.DeepEqual(c.Bench, DefaultBench) {
			t.Errorf("InitialConfig(%q, %q, %q) = %+v", tt.target, tt.path, tt.pin, got)
		}
	}
}

func TestSandboxDefaultsAndSizes(t *testing.T) {
	c, err := Parse("hone.toml", []byte("[sandbox]\ncache_size = \"512MiB\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Sandbox; s.Isolation != IsolationFull || s.Network != "deny" || s.CacheBytes != 512<<20 || len(c.Warnings) != 0 {
		t.Errorf("sandbox %+v, warnings %v", s, c.Warnings)
	}
	for in, want := range map[string]int64{"2GiB": 2 << 30, "1.5 GB": 1.5e9, "4096": 4096, "10KiB": 10240} {
		if n, err := ParseSize(in); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
}

// The old require_isolation still parses, warns once with its line, and
// leaves the full jail on.
func TestRequireIsolationIsDeprecated(t *testing.T) {
	c, err := Parse("hone.toml", []byte("[sandbox]\nrequire_isolation = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Isolation != IsolationFull || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0].Message, "hone.toml:2: [sandbox] require_isolation is deprecated") {
		t.Errorf("isolation %q, warnings %+v", c.Sandbox.Isolation, c.Warnings)
	}
}

// A target at the top level lists its files; its path is ".".
func TestParseTopLevelTarget(t *testing.T) {
	c, err := Parse("hone.toml", []byte("[targets.json]\npath = \"./\"\nfiles = [\"json.c\", \"json.h\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Targets["json"].Rules()
	if r.Root != "." || r.Rule("json.c") != "" || r.Rule("hone.toml") == "" || r.Rule("tests/t.c") == "" {
		t.Errorf("rules %+v: json.c %q, hone.toml %q, tests/t.c %q", r, r.Rule("json.c"), r.Rule("hone.toml"), r.Rule("tests/t.c"))
	}
}

// A sanitizer gate and a differential gate parse with their defaults: the
// seed count and the gate log cap.
func TestParseSanitizerAndDifferentialGates(t *testing.T) {
	c, err := Parse("hone.toml", []byte(`[targets.j]
  [[targets.j.gates]]
  name     = "unit-asan"
  run      = "make test"
  sanitize = ["address", "undefined"]

  [[targets.j.gates]]
  name     = "differential"
  generate = "python3 gen.py"
  run      = "$HONE_OUT/prog"
`))
	if err != nil {
		t.Fatal(err)
	}
	g := c.Targets["j"].Gates
	if len(g[0].Sanitize) != 2 || g[0].Differential() || g[0].Seeds != 0 {
		t.Errorf("sanitizer gate = %+v", g[0])
	}
	if !g[1].Differential() || g[1].Seeds != DefaultSeeds || g[1].Sanitize != nil {
		t.Errorf("differential gate = %+v", g[1])
	}
	if c.Ledger.GateLogBytes != 4<<20 || c.Ledger.GateLogSize != "4MiB" {
		t.Errorf("gate log cap = %q (%d bytes)", c.Ledger.GateLogSize, c.Ledger.GateLogBytes)
	}
}

// [bench] seed was renamed order_seed, so that no one takes it for the
// inputs' seed: the old key still sets the order seed, with a warning
// naming its line; order_seed wins when both are written.
func TestBenchSeedIsOrderSeed(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       int64
		warnings   int
	}{
		{"default", "", 1, 0},
		{"order_seed", "[bench]\norder_seed = 7\n", 7, 0},
		{"the old name", "[bench]\nseed = 9\n", 9, 1},
		{"both", "[bench]\nseed = 9\norder_seed = 3\n", 3, 1},
		{"per target", "[targets.t]\n  [targets.t.bench]\n  seed = 5\n", 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("hone.toml", []byte(tc.toml))
			if err != nil {
				t.Fatal(err)
			}
			got := c.Bench.OrderSeed
			if tt, ok := c.Targets["t"]; ok {
				got = tt.Bench.OrderSeed
			}
			if got != tc.want || len(c.Warnings) != tc.warnings {
				t.Fatalf("order seed %d, warnings %+v; want %d and %d warnings", got, c.Warnings, tc.want, tc.warnings)
			}
			if tc.warnings > 0 && !strings.Contains(c.Warnings[0].Message, "seed is deprecated: it was renamed order_seed") {
				t.Errorf("warning %q", c.Warnings[0].Message)
			}
		})
	}
}
