package workspace

import (
	"fmt"
	"time"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/benchformat"
	"github.com/hone-perf/hone/internal/errs"
)

// Config is the parsed hone.toml. Field names mirror the file's keys; see
// DESIGN.md "The workspace file" for the meaning of each.
type Config struct {
	Ledger   LedgerConfig       `toml:"ledger" json:"ledger"`
	Bench    BenchConfig        `toml:"bench" json:"bench"`
	Sandbox  SandboxConfig      `toml:"sandbox" json:"sandbox"`
	Patch    PatchConfig        `toml:"patch" json:"patch"`
	Guard    GuardConfig        `toml:"guard" json:"guard"`
	Worktree WorktreeConfig     `toml:"worktree" json:"worktree"`
	Runner   RunnerConfig       `toml:"runner" json:"runner"`
	Targets  map[string]*Target `toml:"targets" json:"targets"`

	// Warnings are problems that do not stop hone (a deprecated key), for
	// commands to show.
	Warnings []errs.Warning `toml:"-" json:"-"`

	file string // where the config was read from, for messages
	src  []byte // its text, to find the line of a key
}

// Line returns the line of hone.toml where key is set (or its table begins),
// or 0 when it is not written in the file.
func (c *Config) Line(key ...string) int { return keyLine(c.src, keyPath(key)) }

// Errorf returns an Invalid error naming hone.toml, the key and its line, for
// problems found after parsing (a pin that does not resolve, a path that leaves
// the repository through a symlink).
func (c *Config) Errorf(key []string, format string, args ...any) error {
	return keyError(c.file, c.src, keyPath(key), fmt.Sprintf(format, args...))
}

// RunnerConfig is where this clone asks a runner fleet for verdicts: with
// Remote set, hone verdict and MCP run_verdict push the proposal there and
// wait up to Wait for the fleet's trusted verdict instead of judging here.
type RunnerConfig struct {
	Remote string   `toml:"remote" json:"remote,omitempty"`
	Wait   Duration `toml:"wait" json:"wait"`
	// Repository is this repository's identity, read at the protected
	// base: claims and runners' verdict entries record it, and a server
	// whose base names one takes a verdict only with the release of a
	// claim created on it, so a verdict judged for another repository (a
	// fork with the same main and the same runner key) is never taken.
	Repository string `toml:"repository" json:"repository,omitempty"`
}

type LedgerConfig struct {
	Branch   string `toml:"branch" json:"branch"`       // default "hone/ledger"
	NotesRef string `toml:"notes_ref" json:"notes_ref"` // default "refs/notes/hone"
	// AllowedSigners is a file in git's allowed-signers format, relative to
	// the repository's top level and read at the protected base, naming the
	// keys whose signed verdicts are trusted. Empty: every verdict is.
	AllowedSigners string `toml:"allowed_signers" json:"allowed_signers,omitempty"`
	// GateLogSize bounds, as written ("4MiB"), how much of each stream of
	// each gate run a verdict stores; GateLogBytes is its value in bytes.
	GateLogSize  string `toml:"gate_log_size" json:"gate_log_size"`
	GateLogBytes int64  `toml:"-" json:"gate_log_bytes"`
	// VerdictLogSize bounds, as written ("1MiB"), what one verdict's logs
	// weigh on the shared ledger, compressed; VerdictLogBytes is its value
	// in bytes. The machine that judged keeps them whole.
	VerdictLogSize  string `toml:"verdict_log_size" json:"verdict_log_size"`
	VerdictLogBytes int64  `toml:"-" json:"verdict_log_bytes"`
}

// BenchConfig is the benchmark protocol. The workspace [bench] table gives the
// defaults; a target's [targets.X.bench] table overrides any key it sets.
type BenchConfig struct {
	Run        string  `toml:"run" json:"run"`               // the workload; per target only
	Metric     string  `toml:"metric" json:"metric"`         // instructions | cpu-time | wall
	Pairs      int     `toml:"pairs" json:"pairs"`           // pairs per batch
	MaxPairs   int     `toml:"max_pairs" json:"max_pairs"`   // stop adding batches after this many pairs
	Warmup     int     `toml:"warmup" json:"warmup"`         // warm-up pairs, discarded
	Threshold  float64 `toml:"threshold" json:"threshold"`   // accept only if CI lower bound >= 1+threshold
	Confidence float64 `toml:"confidence" json:"confidence"` // CI level
	// OrderSeed fixes the order of each pair and the bootstrap, so a
	// verdict is reproducible from its samples. It is not the input seed
	// (HONE_SEED, {seed}), which every verdict draws afresh.
	OrderSeed int64 `toml:"order_seed" json:"order_seed"`
	// Seed is order_seed's deprecated name: still read, with a warning;
	// JSON shows order_seed alone.
	Seed    int64    `toml:"seed" json:"-"`
	Timeout Duration `toml:"timeout" json:"timeout"` // per benchmark run
	// MaxSpeedup is the most a deciding benchmark of a harness may speed
	// up before a person must look: a loop that got 20 times cheaper has
	// more likely stopped doing its work than been optimised.
	MaxSpeedup float64 `toml:"max_speedup" json:"max_speedup"`
	// SlowFactor bounds a candidate bench run to this many times the
	// baseline's median wall time so far (never under a second): a
	// slower run is stopped and the candidate rejected, so a patch that
	// makes the workload crawl costs minutes, not max_pairs timeouts.
	SlowFactor float64 `toml:"slow_factor" json:"slow_factor"`
	// Format is how the bench command reports: "process" (the default: the
	// command is one workload, timed whole), "go" or "google-benchmark"
	// (a benchmark harness, one sample per benchmark; see benchformat).
	// Per target only.
	Format string `toml:"format" json:"format"`
	// Benchmarks names the harness's benchmarks that decide (empty: all
	// of them); the others are measured and reported. Per target only.
	Benchmarks []string `toml:"benchmarks" json:"benchmarks,omitempty"`
	// Outputs are custom metric units of the harness that are results,
	// not timings (a checksum): every run must report the baseline's.
	// Per target only.
	Outputs []string `toml:"outputs" json:"outputs,omitempty"`
	// Layouts is how many code layouts each side is built in where the
	// toolchain allows (see build.Layouts); 1 opts out, for a build that
	// must be bit-for-bit the shipped one.
	Layouts int `toml:"layouts" json:"layouts"`
	// MaxLoop bounds the CPU time of a harness benchmark's run at the
	// smaller of its two counts, start-up and loop together (a run at the
	// larger takes about twice the loop more). Longer runs bury the fixed
	// cost deeper and hold the machine's bench turn longer: a maintainer
	// whose benchmarks start in a few milliseconds on a quiet machine may
	// shorten it. On a busy one start-up grows, and the loop with it
	// shrinks. Harness benches only.
	MaxLoop Duration `toml:"max_loop" json:"max_loop"`
}

// SandboxConfig controls the jail every build, gate, bench and profile
// command runs in.
type SandboxConfig struct {
	// Isolation is "full" (the bubblewrap jail; the default) or "weak"
	// (opt-in: whatever namespaces the kernel grants, shown in every view).
	Isolation string `toml:"isolation" json:"isolation"`
	Network   string `toml:"network" json:"network"` // "deny" (default) or "allow"
	// ReadOnly lists extra host paths (toolchains outside /usr) every jail
	// may read; `hone init` writes the ones it finds. Absolute, clean, and
	// never the repository's git directory or hone's state, nor a folder
	// holding them.
	ReadOnly []string `toml:"read_only" json:"read_only,omitempty"`
	// CacheSize bounds the build cache `hone gc` keeps, as written
	// ("2GiB"); CacheBytes is its value in bytes after parsing.
	CacheSize  string `toml:"cache_size" json:"cache_size"`
	CacheBytes int64  `toml:"-" json:"cache_bytes"`
	// RequireIsolation is the deprecated predecessor of Isolation, still
	// read so that old files parse; it changes nothing and warns.
	RequireIsolation bool `toml:"require_isolation" json:"require_isolation,omitempty"`
}

// Isolation modes.
const (
	IsolationFull = "full"
	IsolationWeak = "weak"
)

// DefaultCacheSize is the build cache bound when hone.toml sets none.
const DefaultCacheSize = "2GiB"

// PatchConfig bounds what a proposal may store: every free-text input and
// the diff.
type PatchConfig struct {
	MaxDiffBytes       int64 `toml:"max_diff_bytes" json:"max_diff_bytes"`             // default 4 MiB
	MaxHypothesisBytes int   `toml:"max_hypothesis_bytes" json:"max_hypothesis_bytes"` // default 2 KiB
	MaxHotspotBytes    int   `toml:"max_hotspot_bytes" json:"max_hotspot_bytes"`       // default 256
}

type GuardConfig struct {
	// Base names the protected base refs: their history is trusted, and the
	// rules guards apply are read from hone.toml there. Empty: the branch
	// each target's pin names (see ProtectedBase).
	Base []string `toml:"base" json:"base,omitempty"`
	// Refs are patterns such as "refs/heads/agent/<target>/*"; the target is
	// taken from the ref name where <target> stands. Unset: DefaultGuardRefs.
	Refs []string `toml:"refs" json:"refs"`
	// Maintainers names a file in git's allowed-signers format, read at
	// the protected base as it was before a push: the keys whose signed
	// commits may change what judges pushes there (hone.toml, the allowed
	// signers, this file, a protected path). Empty: the server's hook
	// refuses every such change, which then needs the forge's branch
	// protection.
	Maintainers string `toml:"maintainers" json:"maintainers,omitempty"`
	// MaxQueued caps the proposals of one proposer that a runner's queue
	// holds at a time; the rest wait until those are judged. Zero after
	// parsing means DefaultMaxQueued.
	MaxQueued int `toml:"max_queued" json:"max_queued"`
	// Pusher names the environment variable in which the server tells its
	// pre-receive hook whom it authenticated: GL_USERNAME (GitLab),
	// GITEA_PUSHER_NAME (Gitea, Forgejo), or one an authorized_keys line
	// sets for plain SSH (environment="HONE_PUSHER=alice", with sshd's
	// PermitUserEnvironment). With it, each agent's inbox is bound to the
	// identity that first pushed it, and a push whose variable is empty
	// may not write an inbox. Empty: inboxes are bound only by runners'
	// keys.
	Pusher string `toml:"pusher" json:"pusher,omitempty"`
}

// DefaultMaxQueued is [guard] max_queued when hone.toml sets none: enough
// for an agent's batch of ideas, too few to hold the runners for long.
const DefaultMaxQueued = 4

// DefaultGuardRefs are the refs agents push to, guarded when hone.toml has
// no [guard] refs: a repository without the key is not left unguarded.
var DefaultGuardRefs = []string{"refs/heads/agent/<target>/*"}

type WorktreeConfig struct {
	Base string `toml:"base" json:"base"` // "head" or "fresh" (default)
}

// Target is one optimizable directory of the workspace.
type Target struct {
	Name    string        `toml:"-" json:"name"`
	Path    string        `toml:"path" json:"path"`             // allowlist root, relative to the repository top level
	Pin     string        `toml:"pin" json:"pin"`               // ref or commit, as written
	Protect []string      `toml:"protect" json:"protect"`       // patterns relative to Path that may never be patched
	Files   []string      `toml:"files" json:"files,omitempty"` // when set, globs relative to Path: only these may be patched
	Build   string        `toml:"build" json:"build"`           // runs in <checkout>/<Path>
	Gates   []Gate        `toml:"gates" json:"gates"`
	Bench   BenchConfig   `toml:"bench" json:"bench"` // after Load: the effective protocol (defaults merged)
	Profile ProfileConfig `toml:"profile" json:"profile"`
}

// Rules is the target's allowlist: what its patches may change.
func (t *Target) Rules() allowlist.Rules {
	return allowlist.Rules{Root: t.Path, Protect: t.Protect, Files: t.Files}
}

type Gate struct {
	Name        string   `toml:"name" json:"name"`
	Run         string   `toml:"run" json:"run"`
	Timeout     Duration `toml:"timeout" json:"timeout"`         // default 10m
	Equivalence bool     `toml:"equivalence" json:"equivalence"` // stdout and exit status must equal the baseline's
	// Sanitize runs the gate against builds made with these sanitizers
	// (see package sanitize); a sanitizer report fails it.
	Sanitize []string `toml:"sanitize" json:"sanitize,omitempty"`
	// Generate makes the gate differential: a command that prints one
	// input made from HONE_SEED. Run reads each input on stdin, for Seeds
	// seeds, and its stdout and exit status must equal the baseline's for
	// every one. Timeout bounds each side's whole run of inputs.
	Generate string `toml:"generate" json:"generate,omitempty"`
	Seeds    int    `toml:"seeds" json:"seeds,omitempty"` // default DefaultSeeds when Generate is set
}

// Differential reports whether the gate compares outputs over generated
// inputs.
func (g *Gate) Differential() bool { return g.Generate != "" }

type ProfileConfig struct {
	Run       string `toml:"run" json:"run"`             // default: the bench command
	Format    string `toml:"format" json:"format"`       // "perf" (default) or "pprof"
	Output    string `toml:"output" json:"output"`       // with format = "pprof": the file the command writes
	Frequency int    `toml:"frequency" json:"frequency"` // sampling frequency in Hz
	// CallGraph is how perf unwinds stacks: "fp" (frame pointers) or
	// "dwarf" (copies of the stack unwound with DWARF CFI, for code built
	// without frame pointers; bigger and slower). Empty lets the profile
	// choose: frame pointers, then DWARF when they fail most stacks.
	CallGraph string `toml:"call_graph" json:"call_graph"`
}

// Duration is a time.Duration written as a Go duration string ("90s", "10m").
type Duration struct{ time.Duration }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("not a duration (want e.g. \"90s\" or \"10m\"): %q", b)
	}
	if v < 0 {
		return fmt.Errorf("duration must not be negative: %q", b)
	}
	d.Duration = v
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(d.Duration.String()), nil }

// DefaultBench is the protocol used when hone.toml says nothing.
var DefaultBench = BenchConfig{
	Metric:     MetricCPUTime,
	Pairs:      10,
	MaxPairs:   30,
	Warmup:     1,
	Threshold:  0.02,
	Confidence: 0.95,
	OrderSeed:  1,
	Seed:       1,
	Timeout:    Duration{10 * time.Minute},
	MaxSpeedup: 20,
	SlowFactor: 10,
	Format:     benchformat.Process,
	Layouts:    DefaultLayouts,
	MaxLoop:    Duration{DefaultMaxLoop},
}

// DefaultMaxLoop is [bench] max_loop when hone.toml says nothing;
// MinMaxLoop is the least it may be set to, the least loop a harness run
// needs to be more than its start-up and the machine's noise.
const (
	DefaultMaxLoop = 500 * time.Millisecond
	MinMaxLoop     = 50 * time.Millisecond
	maxMaxLoop     = 10 * time.Second
)

// DefaultLayouts puts the code at each 16-byte offset of a cache line once
// (see build.Layouts); MaxLayouts bounds the builds a verdict may ask for.
const (
	DefaultLayouts = 4
	MaxLayouts     = 16
)

const (
	DefaultLedgerBranch   = "hone/ledger"
	DefaultNotesRef       = "refs/notes/hone"
	DefaultMaxDiffBytes   = 4 << 20
	DefaultGateTimeout    = 10 * time.Minute
	DefaultSeeds          = 1000
	DefaultGateLogSize    = "4MiB"
	DefaultVerdictLogSize = "1MiB"
	FileName              = allowlist.ConfigFile
)

// A hypothesis is a sentence or two and a hotspot a symbol; both go into
// every agent's brief and every ledger view, so they stay small.
const (
	DefaultMaxHypothesisBytes = 2 << 10
	DefaultMaxHotspotBytes    = 256
)
