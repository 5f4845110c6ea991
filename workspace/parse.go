package workspace

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/gitpath"
)

var targetNameRE = lazyRegexp(`^[A-Za-z0-9_-]+$`)

// lazyRegexp compiles on first use: hone.toml is parsed by every command, and
// these patterns are needed only to name a problem.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// Parse decodes and validates hone.toml. file is used only in messages. Every
// problem is an Invalid error naming the key and, where known, its line.
func Parse(file string, data []byte) (*Config, error) {
	p := parser{file: file, data: data, pos: keyPositions(data)}
	// The shape is checked first, so a known table written as a value is
	// reported as such instead of as a type error of the decoder.
	if err := p.checkTables(); err != nil {
		return nil, err
	}
	var cfg Config
	if err := p.decode(&cfg); err != nil {
		return nil, err
	}
	if err := p.validate(&cfg); err != nil {
		return nil, err
	}
	cfg.file, cfg.src = file, data
	return &cfg, nil
}

var topTables = map[string]bool{"ledger": true, "bench": true, "sandbox": true, "patch": true, "guard": true, "worktree": true, "runner": true, "targets": true}

// checkTables rejects a known table written as a plain value (`targets = 5`)
// or as an array of tables.
func (p *parser) checkTables() error {
	for _, kp := range p.pos {
		k := kp.key
		want := ""
		switch {
		case len(k) == 1 && topTables[k[0]],
			len(k) == 2 && k[0] == "targets",
			len(k) == 3 && k[0] == "targets" && (k[2] == "bench" || k[2] == "profile"):
			want = kindTable
		case len(k) == 3 && k[0] == "targets" && k[2] == "gates":
			want = kindTableArray
		}
		if want == "" || kp.kind == want || (want == kindTableArray && kp.kind == kindArray) {
			continue
		}
		if want == kindTable {
			return lineError(p.file, kp.line, k, fmt.Sprintf("must be a table ([%s]), not %s", k, kp.kind))
		}
		return lineError(p.file, kp.line, k, fmt.Sprintf("must be an array of tables ([[%s]]), not %s", k, kp.kind))
	}
	return nil
}

type parser struct {
	file     string
	data     []byte
	pos      []keyPos       // every key the file sets, in file order
	warnings []errs.Warning // for keys that still work but should change
}

// defined reports whether the file sets key or a key below it.
func (p *parser) defined(key ...string) bool {
	for _, kp := range p.pos {
		if kp.key.under(key) {
			return true
		}
	}
	return false
}

func (p *parser) errf(key keyPath, format string, args ...any) error {
	return keyError(p.file, p.data, key, fmt.Sprintf(format, args...))
}

// keyError formats "file:line: key: msg", leaving out the line when the key
// and all its parents are absent from the file (a default that failed).
func keyError(file string, data []byte, key keyPath, msg string) error {
	return lineError(file, keyLine(data, key), key, msg)
}

func (p *parser) validate(c *Config) error {
	if c.Ledger.Branch == "" {
		c.Ledger.Branch = DefaultLedgerBranch
	}
	if c.Ledger.NotesRef == "" {
		c.Ledger.NotesRef = DefaultNotesRef
	}
	if !strings.HasPrefix(c.Ledger.NotesRef, "refs/notes/") {
		return p.errf(keyPath{"ledger", "notes_ref"}, "must start with refs/notes/")
	}
	if c.Ledger.GateLogSize == "" {
		c.Ledger.GateLogSize = DefaultGateLogSize
	}
	n, err := ParseSize(c.Ledger.GateLogSize)
	if err == nil && n < minGateLog {
		err = fmt.Errorf("%q is too small to hold a failure; write at least \"64KiB\"", c.Ledger.GateLogSize)
	}
	if err != nil {
		return p.errf(keyPath{"ledger", "gate_log_size"}, "%v", err)
	}
	c.Ledger.GateLogBytes = n
	if c.Ledger.VerdictLogSize == "" {
		c.Ledger.VerdictLogSize = DefaultVerdictLogSize
	}
	n, err = ParseSize(c.Ledger.VerdictLogSize)
	if err == nil && n < minGateLog {
		err = fmt.Errorf("%q is too small to hold a failure; write at least \"64KiB\"", c.Ledger.VerdictLogSize)
	}
	if err != nil {
		return p.errf(keyPath{"ledger", "verdict_log_size"}, "%v", err)
	}
	c.Ledger.VerdictLogBytes = n
	base := DefaultBench
	if err := p.mergeBench(&base, c.Bench, keyPath{"bench"}); err != nil {
		return err
	}
	for _, k := range []string{"run", "format", "benchmarks", "outputs"} {
		if p.defined("bench", k) {
			return p.errf(keyPath{"bench", k}, "the workload is per target; move it to [targets.NAME.bench]")
		}
	}
	if err := p.sandbox(c); err != nil {
		return err
	}
	if c.Patch.MaxDiffBytes == 0 {
		c.Patch.MaxDiffBytes = DefaultMaxDiffBytes
	} else if c.Patch.MaxDiffBytes < 0 {
		return p.errf(keyPath{"patch", "max_diff_bytes"}, "must be positive")
	}
	for _, lim := range []struct {
		key string
		v   *int
		def int
	}{{"max_hypothesis_bytes", &c.Patch.MaxHypothesisBytes, DefaultMaxHypothesisBytes}, {"max_hotspot_bytes", &c.Patch.MaxHotspotBytes, DefaultMaxHotspotBytes}} {
		if *lim.v == 0 {
			*lim.v = lim.def
		} else if *lim.v < 0 {
			return p.errf(keyPath{"patch", lim.key}, "must be positive")
		}
	}
	switch c.Worktree.Base {
	case "":
		c.Worktree.Base = "fresh"
	case "head", "fresh":
	default:
		return p.errf(keyPath{"worktree", "base"}, "must be \"head\" or \"fresh\", not %q", c.Worktree.Base)
	}
	if c.Ledger.AllowedSigners != "" {
		if !cleanRelative(c.Ledger.AllowedSigners) {
			return p.errf(keyPath{"ledger", "allowed_signers"}, "%q must be a clean path relative to the repository's top level", c.Ledger.AllowedSigners)
		}
	}
	if f := c.Guard.Maintainers; f != "" && !cleanRelative(f) {
		return p.errf(keyPath{"guard", "maintainers"}, "%q must be a clean path relative to the repository's top level", f)
	}
	if v := c.Guard.Pusher; v != "" && !envName.MatchString(v) {
		return p.errf(keyPath{"guard", "pusher"}, "%q must name an environment variable, such as GL_USERNAME", v)
	}
	switch {
	case c.Guard.MaxQueued < 0:
		return p.errf(keyPath{"guard", "max_queued"}, "must be at least 1, not %d", c.Guard.MaxQueued)
	case c.Guard.MaxQueued == 0:
		c.Guard.MaxQueued = DefaultMaxQueued
	}
	for _, ref := range c.Guard.Base {
		if !strings.HasPrefix(ref, "refs/") || strings.ContainsAny(ref, " \t*?[") {
			return p.errf(keyPath{"guard", "base"}, "%q must be a full ref name such as refs/heads/main", ref)
		}
	}
	if !p.defined("guard", "refs") {
		c.Guard.Refs = append([]string(nil), DefaultGuardRefs...)
	}
	for _, pat := range c.Guard.Refs {
		if !strings.HasPrefix(pat, "refs/") || !strings.Contains(pat, "<target>") {
			return p.errf(keyPath{"guard", "refs"}, "pattern %q must start with refs/ and contain <target>", pat)
		}
	}
	if c.Targets == nil {
		c.Targets = map[string]*Target{}
	}
	for _, name := range sortedKeys(c.Targets) {
		if err := p.validateTarget(name, c.Targets[name], base); err != nil {
			return err
		}
		if f := c.Ledger.AllowedSigners; f != "" && c.Targets[name].Rules().Rule(f) == "" {
			return p.errf(keyPath{"ledger", "allowed_signers"}, "%q is a file target %q may change, and its patches could trust their own verdicts; keep it under %s/, or protect it", f, name, allowlist.StateDir)
		}
	}
	c.Bench = base
	c.Warnings = append(c.Warnings, p.warnings...)
	return nil
}

func (p *parser) validateTarget(name string, t *Target, defaults BenchConfig) error {
	key := func(k ...string) keyPath { return keyPath{"targets", name}.with(k...) }
	if !targetNameRE().MatchString(name) {
		return p.errf(key(), "target name %q may only use letters, digits, '_' and '-'", name)
	}
	t.Name = name
	if t.Path == "" {
		t.Path = "targets/" + name
	}
	if path.Clean(t.Path) == "." {
		if !p.defined(key("files")...) {
			return p.errf(key("path"), "names the repository's top level: a target there needs files = [...] naming the files patches may change (%s, %s/ and .git* never may)", FileName, allowlist.StateDir)
		}
	} else if err := checkRelPath(t.Path); err != nil {
		return p.errf(key("path"), "%v", err)
	}
	t.Path = path.Clean(t.Path)
	if t.Pin == "" {
		t.Pin = "HEAD"
	}
	for _, list := range []string{"protect", "files"} {
		pats := t.Protect
		if list == "files" {
			pats = t.Files
		}
		for i, pat := range pats {
			if err := allowlist.CheckPattern(pat); err != nil {
				return p.errf(key(list), "pattern %d (%q): %v", i+1, pat, err)
			}
		}
	}
	// Empty, not absent, in --json: a list a script can range over.
	if t.Protect == nil {
		t.Protect = []string{}
	}
	if t.Gates == nil {
		t.Gates = []Gate{}
	}
	if p.defined(key("files")...) && len(t.Files) == 0 {
		return p.errf(key("files"), "is empty, which would allow no change at all; list the files patches may change, or remove the key to allow every file under path")
	}
	if err := p.validateGates(key("gates"), t.Gates); err != nil {
		return err
	}
	own := t.Bench
	t.Bench = defaults
	t.Bench.Run = own.Run
	if err := p.mergeBench(&t.Bench, own, key("bench")); err != nil {
		return err
	}
	if err := p.harness(&t.Bench, own, key("bench")); err != nil {
		return err
	}
	switch t.Profile.Format {
	case "":
		t.Profile.Format = "perf"
	case "perf":
	case "pprof":
		if t.Profile.Output == "" {
			return p.errf(key("profile", "output"), "format = \"pprof\" needs output = \"<file the command writes>\"")
		}
	default:
		return p.errf(key("profile", "format"), "must be \"perf\" or \"pprof\", not %q", t.Profile.Format)
	}
	if t.Profile.Frequency < 0 {
		return p.errf(key("profile", "frequency"), "must be positive")
	}
	switch t.Profile.CallGraph {
	case "", "fp", "dwarf":
	default:
		return p.errf(key("profile", "call_graph"), "must be \"fp\" or \"dwarf\", not %q", t.Profile.CallGraph)
	}
	return nil
}

// mergeBench copies into dst every key of src that the file defines under at.
func (p *parser) mergeBench(dst *BenchConfig, src BenchConfig, at keyPath) error {
	def := func(k string) bool { return p.defined(at.with(k)...) }
	k := func(name string) keyPath { return at.with(name) }
	if def("metric") {
		if err := CheckMetric(src.Metric); err != nil {
			return p.errf(k("metric"), "%v", err)
		}
		dst.Metric = src.Metric
	}
	if def("pairs") {
		if src.Pairs < 1 {
			return p.errf(k("pairs"), "must be at least 1")
		}
		dst.Pairs = src.Pairs
	}
	if def("max_pairs") {
		dst.MaxPairs = src.MaxPairs
	}
	if def("warmup") {
		if src.Warmup < 0 {
			return p.errf(k("warmup"), "must not be negative")
		}
		dst.Warmup = src.Warmup
	}
	if def("threshold") {
		if src.Threshold < 0 || src.Threshold >= 1 {
			return p.errf(k("threshold"), "must be in [0, 1), e.g. 0.02 for 2%%")
		}
		dst.Threshold = src.Threshold
	}
	if def("confidence") {
		if src.Confidence <= 0.5 || src.Confidence >= 1 {
			return p.errf(k("confidence"), "must be in (0.5, 1), e.g. 0.95")
		}
		dst.Confidence = src.Confidence
	}
	switch {
	case def("order_seed"):
		dst.OrderSeed = src.OrderSeed
	case def("seed"):
		dst.OrderSeed = src.Seed
	}
	if def("seed") {
		p.warnings = append(p.warnings, errs.Warning{Code: "deprecated_key", Message: fmt.Sprintf(
			"%s:%d: %s is deprecated: it was renamed order_seed (it fixes the pair order and the bootstrap; the inputs' seed is drawn afresh by every verdict); rename the key",
			p.file, keyLine(p.data, k("seed")), k("seed").String())})
	}
	dst.Seed = dst.OrderSeed
	if def("timeout") {
		dst.Timeout = src.Timeout
	}
	if def("layouts") {
		if src.Layouts < 1 || src.Layouts > MaxLayouts {
			return p.errf(k("layouts"), "must be from 1 (the plain build only) to %d", MaxLayouts)
		}
		dst.Layouts = src.Layouts
	}
	if def("max_loop") {
		if src.MaxLoop.Duration < MinMaxLoop || src.MaxLoop.Duration > maxMaxLoop {
			return p.errf(k("max_loop"), "must be from %v to %v of CPU time per run, e.g. \"500ms\"", MinMaxLoop, maxMaxLoop)
		}
		dst.MaxLoop = src.MaxLoop
	}
	if def("max_speedup") {
		if src.MaxSpeedup <= 1 {
			return p.errf(k("max_speedup"), "must be more than 1, e.g. 20")
		}
		dst.MaxSpeedup = src.MaxSpeedup
	}
	if def("slow_factor") {
		if src.SlowFactor < 2 {
			return p.errf(k("slow_factor"), "must be at least 2 (a candidate run may take this many times the baseline's median), e.g. 10")
		}
		dst.SlowFactor = src.SlowFactor
	}
	if dst.MaxPairs < dst.Pairs {
		return p.errf(k("max_pairs"), "must be at least pairs (%d)", dst.Pairs)
	}
	return nil
}

// harness reads a target's bench format keys and checks its command against
// the format: a harness must run with a fixed iteration count, and its
// reported timings cannot be outputs.
func (p *parser) harness(dst *BenchConfig, own BenchConfig, at keyPath) error {
	k := func(name string) keyPath { return at.with(name) }
	if own.Format != "" {
		dst.Format = own.Format
	}
	if !slices.Contains(benchformat.Formats(), dst.Format) {
		return p.errf(k("format"), "must be one of %s, not %.40q", strings.Join(benchformat.Formats(), ", "), dst.Format)
	}
	dst.Benchmarks, dst.Outputs = own.Benchmarks, own.Outputs
	if dst.Format == benchformat.Process {
		for _, key := range []string{"benchmarks", "outputs", "max_loop"} {
			if p.defined(k(key)...) {
				return p.errf(k(key), "needs a benchmark harness: set format = \"go\" or \"google-benchmark\"")
			}
		}
	} else if p.defined(k("metric")...) && dst.Metric != MetricCPUTime {
		return p.errf(k("metric"), "a %s harness is decided by cpu-time per iteration; remove the key or write \"cpu-time\"", dst.Format)
	}
	if dst.Format != benchformat.Process {
		dst.Metric = MetricCPUTime
	}
	for i, u := range dst.Outputs {
		if timingUnit(u) {
			return p.errf(k("outputs"), "unit %d (%.40q) is a timing, which changes from run to run; outputs are results the benchmark computes (a checksum)", i+1, u)
		}
	}
	for i, name := range dst.Benchmarks {
		if strings.TrimSpace(name) == "" || slices.Contains(dst.Benchmarks[:i], name) {
			return p.errf(k("benchmarks"), "name %d (%.40q) is empty or repeated", i+1, name)
		}
	}
	if dst.Run == "" {
		return nil
	}
	if err := benchformat.Check(dst.Format, dst.Run); err != nil {
		return p.errf(k("run"), "%v", err)
	}
	for _, w := range benchformat.Warnings(dst.Format, dst.Run) {
		p.warnings = append(p.warnings, errs.Warning{Code: "bench_command", Message: fmt.Sprintf("%s:%d: %s: %s", p.file, keyLine(p.data, k("run")), k("run").String(), w)})
	}
	return nil
}

// timingUnit reports whether a harness unit measures time or a rate, which
// no two runs report alike.
func timingUnit(u string) bool {
	switch u {
	case "ns/op", "cpu-ns/op", "sec/op", "MB/s", "B/s":
		return true
	}
	return strings.HasSuffix(u, "_per_second") || strings.HasSuffix(u, "/s") || strings.HasSuffix(u, "-ns/op")
}

func checkRelPath(p string) error {
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("must be relative to the repository top level, not absolute (%q)", p)
	case hasDotDot(p):
		return fmt.Errorf("must not contain '..' (%q): a target cannot leave the repository", p)
	case path.Clean(p) == ".":
		return fmt.Errorf("must name a subdirectory; the top level (\".\") needs files = [...]")
	}
	for _, seg := range strings.Split(path.Clean(p), "/") {
		if gitpath.IsDotGit(seg) {
			return fmt.Errorf("must not point into .git (%q)", p)
		}
	}
	return nil
}

func hasDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TargetNames lists the targets in name order.
func (c *Config) TargetNames() []string { return sortedKeys(c.Targets) }

// Target returns the named target or a NotFound error listing the known ones.
func (c *Config) Target(name string) (*Target, error) {
	if t, ok := c.Targets[name]; ok {
		return t, nil
	}
	names := c.TargetNames()
	if len(names) == 0 {
		return nil, errs.NotFoundf("unknown target %q: %s defines no targets; add a [targets.%s] table", name, c.file, name)
	}
	return nil, errs.NotFoundf("unknown target %q; known targets: %s", name, strings.Join(names, ", "))
}

// CheckTargetName returns an Invalid error when name cannot be a target name.
func CheckTargetName(name string) error {
	if !targetNameRE().MatchString(name) {
		return errs.Invalidf("target name %q may only use letters, digits, '_' and '-'", name)
	}
	return nil
}

// CheckTargetPath returns an Invalid error when p cannot be a target's path
// (absolute, with '..', or inside .git). The top level itself (".") is a
// path only for a target that lists its files.
func CheckTargetPath(p string) error {
	if path.Clean(p) == "." {
		return nil
	}
	if err := checkRelPath(p); err != nil {
		return errs.Invalidf("target path %v", err)
	}
	return nil
}

// cleanRelative reports whether f is a clean slash path inside the
// repository: what a file named by hone.toml and read from a commit must be.
func cleanRelative(f string) bool {
	return !path.IsAbs(f) && path.Clean(f) == f && f != "." && !strings.HasPrefix(f, "../") && !strings.Contains(f, "\\")
}

// envName is the shape of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
