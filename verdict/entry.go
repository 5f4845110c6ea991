// Package verdict decides whether a patch made its target faster: it builds the
// pin and the patch commit in fresh checkouts (package build), runs the
// target's gates in the jail, benchmarks baseline and candidate in
// interleaved pairs until a sequential decision is clear, and records a
// verdict entry (with its raw samples, so anyone can recompute it) in the
// ledger.
package verdict

import (
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/sanitize"
	"github.com/hone-perf/hone/verdict/stats"
)

// Reasons recorded beside the verdict word.
const (
	ReasonImproved     = "improved"     // accepted or needs-human-review
	ReasonRegressed    = "regressed"    // rejected-bench: the candidate is slower
	ReasonNoChange     = "no-change"    // rejected-bench: no change of at least the threshold
	ReasonInconclusive = "inconclusive" // rejected-bench: max_pairs reached, CI straddles the threshold
	ReasonGateFailed   = "gate-failed"  // rejected-gate
	ReasonBaseline     = "baseline"     // error: the baseline failed (build, gate or bench)
	ReasonTooling      = "tooling"      // error: a tool or isolation the protocol needs is missing
	ReasonOutput       = "output"       // rejected-gate: a bench run's output differs from the baseline's
	ReasonLeftover     = "leftover"     // rejected-gate: a candidate run left processes running
	ReasonUnconfirmed  = "unconfirmed"  // needs-human-review: faster in instructions, not confirmed in cpu-time
	ReasonWallSlower   = "wall-slower"  // needs-human-review: faster in cpu-time, slower in wall time
	ReasonLayout       = "layout"       // needs-human-review: faster in some code layouts only
	ReasonInterrupted  = "interrupted"  // cancelled: the verdict was interrupted before it could finish
	ReasonSlow         = "slow"         // rejected-bench: a candidate run took over slow_factor times the baseline's median
	// ReasonUnprotectedPin: needs-human-review, faster at a pin that is not
	// on the protected base; recorded by earlier versions only, since such
	// a pin is now refused as stale (workspace.ReasonStalePin).
	ReasonUnprotectedPin = "unprotected-pin"
)

// Entry is a verdict ledger entry (Kind = verdict). Fields are only ever added.
type Entry struct {
	ledger.Common
	Reason string `toml:"reason" json:"reason"`
	// InputSeed is the verdict's own seed, drawn afresh (crypto/rand) and
	// kept for a re-run of an error verdict. In entries written before
	// per-run seeds it was the one seed every gate and bench run got as
	// {seed} and HONE_SEED; now each gate run and each bench pair draws
	// its own (GateResult.Setup, Bench.Setups), and a harness bench's
	// runs get this one. It is not Bench.Seed, which orders the pairs.
	InputSeed int64 `toml:"input_seed,omitempty" json:"input_seed,omitempty"`
	// ConfigBlob is the id of the hone.toml blob at the pin that gave the
	// gates, the bench and the jail settings.
	ConfigBlob string `toml:"config_blob,omitempty" json:"config_blob,omitempty"`
	// PinUnprotected is set when the pin is not reachable from the
	// protected base refs: an agent's own commit, whose hone.toml the
	// agent wrote. The summary says so too, for every view.
	PinUnprotected bool `toml:"pin_unprotected,omitempty" json:"pin_unprotected,omitempty"`
	// Started is the id of the started entry this verdict finishes.
	Started string `toml:"started,omitempty" json:"started,omitempty"`
	// Rejudges is the earlier verdict a person asked to judge again, with
	// their reason; the samples of both are pooled.
	Rejudges      string `toml:"rejudges,omitempty" json:"rejudges,omitempty"`
	RejudgeReason string `toml:"rejudge_reason,omitempty" json:"rejudge_reason,omitempty"`
	// Retries is an earlier verdict on the same idea at another pin (the
	// same diff or attempt key, before the pin moved).
	Retries string `toml:"retries,omitempty" json:"retries,omitempty"`
	// Overrides are the command line's tightenings of the pin's protocol.
	Overrides *Overrides `toml:"overrides,omitempty" json:"overrides,omitempty"`
	// Detail is one or two sentences saying why, naming the gate, signal or
	// metric that decided.
	Detail      string       `toml:"detail" json:"detail"`
	RiskSignals []string     `toml:"risk_signals,omitempty" json:"risk_signals,omitempty"`
	Gates       []GateResult `toml:"gates,omitempty" json:"gates,omitempty"`
	Bench       *Bench       `toml:"bench,omitempty" json:"bench,omitempty"`
	Environment Environment  `toml:"environment" json:"environment"`
	// CalibrationWarning is set when this host has no calibration of the
	// target newer than CalibrationMaxAge.
	CalibrationWarning string `toml:"calibration_warning,omitempty" json:"calibration_warning,omitempty"`
	// KeptCheckouts are the checkouts left in place by Options.Keep. They are
	// local paths, so they are not stored in the ledger.
	KeptCheckouts []string `toml:"-" json:"kept_checkouts,omitempty"`
	// Logs names the attachment holding the full output of the builds and
	// gates (LogsAttachment); empty when nothing printed.
	Logs string `toml:"logs,omitempty" json:"logs,omitempty"`

	// Unseeded says why the target is unseeded (ledger.FlagUnseeded): the
	// seed check's finding, which turns an accept into a person's call, so
	// --recompute replays that step from the entry alone.
	Unseeded string `toml:"unseeded,omitempty" json:"unseeded,omitempty"`

	logs *gateLogs // gathered while judging, stored by Run
}

// Overrides are the protocol settings a person tightened on the command
// line; zero fields were left as hone.toml has them.
type Overrides struct {
	MaxPairs  int     `toml:"max_pairs,omitempty" json:"max_pairs,omitempty"`
	Threshold float64 `toml:"threshold,omitempty" json:"threshold,omitempty"`
}

// StartedEntry is written before a verdict's first run (Kind = started):
// with no verdict after it, the attempt counts as cancelled.
type StartedEntry struct {
	ledger.Common
	InputSeed int64  `toml:"input_seed" json:"input_seed"`
	Host      string `toml:"host" json:"host"`
	PID       int    `toml:"pid" json:"pid"`
	Rejudges  string `toml:"rejudges,omitempty" json:"rejudges,omitempty"`
}

// GateResult is one gate (or the build) on one or both sides.
type GateResult struct {
	Name        string   `toml:"name" json:"name"`
	Passed      bool     `toml:"passed" json:"passed"`
	Equivalence bool     `toml:"equivalence,omitempty" json:"equivalence,omitempty"`
	Candidate   *RunInfo `toml:"candidate,omitempty" json:"candidate,omitempty"`
	Baseline    *RunInfo `toml:"baseline,omitempty" json:"baseline,omitempty"`
	// Message says why the gate failed: the first failing line and the exit
	// status, the sanitizer report, the first output that differs.
	Message string `toml:"message,omitempty" json:"message,omitempty"`
	// Sanitize lists the sanitizers the gate's builds had.
	Sanitize []string `toml:"sanitize,omitempty" json:"sanitize,omitempty"`
	// Differential is a differential gate's account of its inputs.
	Differential *Differential `toml:"differential,omitempty" json:"differential,omitempty"`
	// Setup is the seed and padding the gate's runs got, the same for its
	// baseline and candidate run and drawn for this gate alone; absent in
	// entries written before per-run seeds (Entry.InputSeed).
	Setup *PairSetup `toml:"setup,omitempty" json:"setup,omitempty"`
}

// RunInfo summarises one sandboxed command.
type RunInfo struct {
	ExitCode     int     `toml:"exit_code" json:"exit_code"`
	Signaled     bool    `toml:"signaled,omitempty" json:"signaled,omitempty"`
	TimedOut     bool    `toml:"timed_out,omitempty" json:"timed_out,omitempty"`
	WallSeconds  float64 `toml:"wall_seconds" json:"wall_seconds"`
	CPUSeconds   float64 `toml:"cpu_seconds" json:"cpu_seconds"`
	StdoutSHA256 string  `toml:"stdout_sha256,omitempty" json:"stdout_sha256,omitempty"`
	StdoutBytes  int64   `toml:"stdout_bytes" json:"stdout_bytes"`
	Cached       bool    `toml:"cached,omitempty" json:"cached,omitempty"` // builds: reused from the build cache
	// Leftover counts processes still running when the command exited;
	// the jail killed them and charged their CPU time.
	Leftover int `toml:"leftover,omitempty" json:"leftover,omitempty"`
	// UnreapedSeconds is CPU time of processes the kernel reaped itself
	// (their parent ignored SIGCHLD), counted through the run's cgroup.
	UnreapedSeconds float64 `toml:"unreaped_seconds,omitempty" json:"unreaped_seconds,omitempty"`
	// OutputTail is the end of stdout and stderr, kept for failures only.
	OutputTail string `toml:"output_tail,omitempty" json:"output_tail,omitempty"`
	// FailureLine is the line that says what failed (see failureLine),
	// from all the output the run kept; for failures only.
	FailureLine string `toml:"failure_line,omitempty" json:"failure_line,omitempty"`
	// Sanitizer is the first sanitizer report of a run on a sanitizer build.
	Sanitizer *sanitize.Finding `toml:"sanitizer,omitempty" json:"sanitizer,omitempty"`
}

// Bench is the benchmark protocol as run, its statistics and its raw samples.
type Bench struct {
	Command string `toml:"command" json:"command"`
	// Format is the bench's harness format ("go", "google-benchmark"),
	// empty for a process bench. A harness bench's Samples are each
	// pair's geometric mean, over the deciding benchmarks, of the
	// benchmarks' figures per iteration (ns/op); Benchmarks holds each
	// benchmark's own.
	Format     string            `toml:"format,omitempty" json:"format,omitempty"`
	Benchmarks []BenchmarkResult `toml:"benchmarks,omitempty" json:"benchmarks,omitempty"`
	// MaxSpeedup and HarnessOutputs are [bench] max_speedup and outputs
	// as the harness bench ran, for judging it again from the entry alone.
	MaxSpeedup     float64  `toml:"max_speedup,omitempty" json:"max_speedup,omitempty"`
	HarnessOutputs []string `toml:"harness_outputs,omitempty" json:"harness_outputs,omitempty"`
	// Family is how a harness bench decides on its benchmarks one by one
	// besides their geometric mean (FamilyBonferroni), empty in entries
	// judged on the geometric mean alone, which recompute judges so.
	Family string `toml:"family,omitempty" json:"family,omitempty"`
	// MaxLoopSeconds is [bench] max_loop as the harness bench sized its
	// counts (the CPU time of a run at the smaller, at most); absent in
	// entries written before the key, which sized for half a second.
	MaxLoopSeconds float64 `toml:"max_loop_seconds,omitempty" json:"max_loop_seconds,omitempty"`
	// NoisierFloor is the spread, as a share of its median, below which a
	// benchmark's candidate runs are never taken for noisier than the
	// baseline's (noisier): half the threshold. Absent in entries before
	// it, which had no floor.
	NoisierFloor float64 `toml:"noisier_floor,omitempty" json:"noisier_floor,omitempty"`
	// OneCPU: every run of the harness started on one CPU (jail.Spec.OneCPU),
	// as harness runs have since the key.
	OneCPU     bool    `toml:"one_cpu,omitempty" json:"one_cpu,omitempty"`
	Metric     string  `toml:"metric" json:"metric"` // the deciding metric
	Pairs      int     `toml:"pairs" json:"pairs"`   // pairs measured (warm-up excluded)
	BatchSize  int     `toml:"batch_size" json:"batch_size"`
	MaxPairs   int     `toml:"max_pairs" json:"max_pairs"`
	Warmup     int     `toml:"warmup" json:"warmup"`
	Threshold  float64 `toml:"threshold" json:"threshold"`
	Confidence float64 `toml:"confidence" json:"confidence"`
	// Seed is the order seed ([bench] order_seed): it orders each pair
	// (and seeds the bootstrap of entries without a Method). It is not the
	// input seed (Entry.InputSeed).
	Seed      int64 `toml:"seed" json:"seed"`
	Resamples int   `toml:"resamples" json:"resamples"` // bootstrap resamples, for entries without a Method
	// Method is how the statistics were computed and decided:
	// "paired-log-ratio+lan-demets+tost" (MethodEquivalence: as
	// MethodSequential, with "same" a hypothesis of its own that also
	// looks halfway through batches), "paired-log-ratio+lan-demets"
	// (MethodSequential: the speedup is the
	// exponential of the Hodges-Lehmann estimate of the per-pair log
	// ratios, its CI the signed-rank interval of Walsh averages, p a
	// Wilcoxon signed-rank test, each look's levels from Looks),
	// "paired-log-ratio" (the same statistics, every look at Confidence),
	// or empty in entries written before it existed (ratio of medians, a
	// bootstrap CI of pairs, Mann-Whitney U).
	Method string `toml:"method,omitempty" json:"method,omitempty"`
	// Looks are the planned looks of the sequential design and each one's
	// levels (MethodEquivalence, MethodSequential); Metrics are at the
	// level of the interval that decided.
	Looks []Look `toml:"looks,omitempty" json:"looks,omitempty"`
	// Setups are the measured pairs' setups, index i being pair i (the
	// pooled pairs' first), and Warmups the warm-up pairs'.
	Setups  []PairSetup `toml:"setups,omitempty" json:"setups,omitempty"`
	Warmups []PairSetup `toml:"warmups,omitempty" json:"warmups,omitempty"`
	// Outputs are the stdout hashes of each measured pair, which both its
	// runs printed: bench output is checked pair by pair.
	Outputs []string `toml:"outputs,omitempty" json:"outputs,omitempty"`
	// OutputSHA256 is, in entries written before per-pair seeds, the hash
	// of the stdout every bench run printed.
	OutputSHA256 string `toml:"output_sha256,omitempty" json:"output_sha256,omitempty"`
	// PooledPairs are the leading pairs of Samples taken over from the
	// verdict a rejudge pooled with.
	PooledPairs int `toml:"pooled_pairs,omitempty" json:"pooled_pairs,omitempty"`
	// Order has one letter per measured pair: "b" when the baseline ran
	// first, "c" when the candidate did.
	Order string `toml:"order" json:"order"`
	// Decisions is the sequential decision after each batch of this
	// verdict (pooled pairs are not batches of its own): "measure-more",
	// then the final one ("faster", "slower", "same", or at max_pairs
	// "undecided").
	Decisions []string `toml:"decisions" json:"decisions"`
	Seconds   float64  `toml:"seconds" json:"seconds"` // wall time of the whole bench
	// CommandSeconds is the summed wall time of the bench commands (warm-up
	// and measured pairs, as the sandbox timed them); with Seconds it shows
	// the harness's overhead.
	CommandSeconds float64 `toml:"command_seconds" json:"command_seconds"`
	// Leftover processes and unreaped CPU time of each side's runs, summed
	// (see RunInfo): a run that leaves work running behind it is seen.
	BaselineLeftover         int     `toml:"baseline_leftover,omitempty" json:"baseline_leftover,omitempty"`
	CandidateLeftover        int     `toml:"candidate_leftover,omitempty" json:"candidate_leftover,omitempty"`
	BaselineUnreapedSeconds  float64 `toml:"baseline_unreaped_seconds,omitempty" json:"baseline_unreaped_seconds,omitempty"`
	CandidateUnreapedSeconds float64 `toml:"candidate_unreaped_seconds,omitempty" json:"candidate_unreaped_seconds,omitempty"`
	// BaselineTasks and CandidateTasks are the fewest and the most
	// threads and processes one bench run of each side started (the
	// jail's count), nil when the jail could not count them.
	BaselineTasks  *TaskRange `toml:"baseline_tasks,omitempty" json:"baseline_tasks,omitempty"`
	CandidateTasks *TaskRange `toml:"candidate_tasks,omitempty" json:"candidate_tasks,omitempty"`

	Metrics []MetricStats `toml:"metrics" json:"metrics"`
	Samples []Samples     `toml:"samples" json:"samples"`
	// Layout is how the pairs sampled code layout; nil in entries written
	// before layouts existed.
	Layout *LayoutReport `toml:"layout,omitempty" json:"layout,omitempty"`
	// Counters are perf stat counters of the warm-up runs, by event; events
	// the machine does not support are absent, never zero. In JSON they are
	// one list, Counters, which MarshalJSON fills from the maps: event names
	// are not field names.
	BaselineCounters  map[string]float64 `toml:"baseline_counters,omitempty" json:"-"`
	CandidateCounters map[string]float64 `toml:"candidate_counters,omitempty" json:"-"`
	Counters          []Counter          `toml:"-" json:"counters,omitempty"`
	// Check is the short cpu-time batch that must confirm an acceptance in
	// the instructions tier: a candidate can tell it runs under valgrind
	// or perf, and neither counts the kernel's work.
	Check *Check `toml:"check,omitempty" json:"check,omitempty"`

	// paired is the deciding metric's statistics at the latest look,
	// which the next look extends (stats.Paired.Extend).
	paired stats.Paired
}

// TaskRange is the fewest and the most tasks (threads and processes) of
// one side's bench runs.
type TaskRange struct {
	Min int `toml:"min" json:"min"`
	Max int `toml:"max" json:"max"`
}

// add widens r by one run's count; an unknown count (0) leaves it as is.
func (r *TaskRange) add(n int) *TaskRange {
	switch {
	case n <= 0:
		return r
	case r == nil:
		return &TaskRange{Min: n, Max: n}
	}
	return &TaskRange{Min: min(r.Min, n), Max: max(r.Max, n)}
}

// Check is a short batch of pairs measured in cpu-time, with the bench's
// confidence, order seed and method, that confirms an instructions-tier
// "faster".
type Check struct {
	Pairs   int           `toml:"pairs" json:"pairs"`
	Order   string        `toml:"order" json:"order"`
	Seconds float64       `toml:"seconds" json:"seconds"`
	Metrics []MetricStats `toml:"metrics" json:"metrics"`
	Samples []Samples     `toml:"samples" json:"samples"`
}

// Samples are the raw measurements of one metric, index i being pair i.
type Samples struct {
	Metric    string    `toml:"metric" json:"metric"`
	Unit      string    `toml:"unit" json:"unit"`
	Baseline  []float64 `toml:"baseline" json:"baseline"`
	Candidate []float64 `toml:"candidate" json:"candidate"`
}

// MetricStats are the statistics of one metric.
type MetricStats struct {
	Metric          string  `toml:"metric" json:"metric"`
	Unit            string  `toml:"unit" json:"unit"`
	Pairs           int     `toml:"pairs" json:"pairs"`
	BaselineMedian  float64 `toml:"baseline_median" json:"baseline_median"`
	CandidateMedian float64 `toml:"candidate_median" json:"candidate_median"`
	// Speedup is above 1 when the candidate is faster: exp of the
	// Hodges-Lehmann estimate of the pairs' log ratios baseline/candidate
	// (MethodPaired), or, in older entries, baseline median / candidate
	// median.
	Speedup float64 `toml:"speedup" json:"speedup"`
	CILow   float64 `toml:"ci_low" json:"ci_low"`
	CIHigh  float64 `toml:"ci_high" json:"ci_high"`
	// Confidence is the level of [CILow, CIHigh]: the deciding look's,
	// which every view names the same way (CILabel); 0 in entries
	// written before it was recorded.
	Confidence float64 `toml:"confidence,omitempty" json:"confidence,omitempty"`
	// P is the two-sided p-value of the bench's method: Wilcoxon's
	// signed-rank test of the pairs' log ratios, or, in entries written
	// before it, Mann-Whitney U (golang.org/x/perf/benchmath).
	P float64 `toml:"p" json:"p"`
	// Outliers counts samples outside the Tukey fences (1.5 IQR) per side;
	// they are kept, the median being robust to them.
	BaselineOutliers  int `toml:"baseline_outliers" json:"baseline_outliers"`
	CandidateOutliers int `toml:"candidate_outliers" json:"candidate_outliers"`
	// Robust coefficients of variation: 1.4826 * MAD / median.
	BaselineCV  float64 `toml:"baseline_cv" json:"baseline_cv"`
	CandidateCV float64 `toml:"candidate_cv" json:"candidate_cv"`
	// DetectableChange is the smallest relative change this run could have
	// told from none: the CI's half-width relative to the speedup.
	DetectableChange float64 `toml:"detectable_change" json:"detectable_change"`
}

// Environment fingerprints where and on what the verdict was measured.
type Environment struct {
	PinCommit   string `toml:"pin_commit" json:"pin_commit"`
	PatchCommit string `toml:"patch_commit" json:"patch_commit"`
	// The sha256 of each file of HONE_OUT, by name; in JSON one list,
	// Binaries, which MarshalJSON fills from the maps: file names are not
	// field names.
	BaselineBinary  map[string]string `toml:"baseline_binary,omitempty" json:"-"`
	CandidateBinary map[string]string `toml:"candidate_binary,omitempty" json:"-"`
	Binaries        []Binary          `toml:"-" json:"binaries,omitempty"`
	Host            string            `toml:"host" json:"host"`
	Kernel          string            `toml:"kernel" json:"kernel"`
	CPUModel        string            `toml:"cpu_model" json:"cpu_model"`
	CPUs            int               `toml:"cpus" json:"cpus"`
	LoadAvg         string            `toml:"loadavg" json:"loadavg"` // /proc/loadavg at the start of the bench
	// Isolation is what the commands ran under: "full" (the bubblewrap
	// jail) or, with [sandbox] isolation = "weak", the weak level obtained
	// ("userns+pidns+netns", ..., "process-group"). Weak is set then.
	Isolation     string `toml:"isolation" json:"isolation"`
	Weak          bool   `toml:"weak,omitempty" json:"weak,omitempty"`
	NetworkDenied bool   `toml:"network_denied" json:"network_denied"`
	// Seccomp is the version of the system call filter every run had
	// (jail.FilterVersion), or empty when any run had none: weak
	// isolation, or the operator's HONE_SECCOMP=off.
	Seccomp string `toml:"seccomp,omitempty" json:"seccomp,omitempty"`
	// JailUID is the host uid the commands ran as; JailUserCreated reports
	// that this verdict created the jail user (hone was root).
	JailUID         int  `toml:"jail_uid" json:"jail_uid"`
	JailUserCreated bool `toml:"jail_user_created,omitempty" json:"jail_user_created,omitempty"`
	// Cgroup reports that every run had a cgroup of its own, so CPU time
	// of processes the kernel reaped itself was counted too.
	Cgroup bool `toml:"cgroup" json:"cgroup"`
	// BaselineCacheDiscarded names the first file of a cached baseline
	// build that differed from its manifest: the entry was thrown away and
	// the pin built again.
	BaselineCacheDiscarded string            `toml:"baseline_cache_discarded,omitempty" json:"baseline_cache_discarded,omitempty"`
	Perf                   PerfInfo          `toml:"perf" json:"perf"`
	InstructionsVia        string            `toml:"instructions_via,omitempty" json:"instructions_via,omitempty"` // "perf" or "valgrind"
	Tools                  map[string]string `toml:"tools" json:"tools"`                                           // tool -> first line of its version

	jailSeen bool // noteJail has seen a run
}

// PerfInfo is what perf stat can count on this machine.
type PerfInfo struct {
	Available   bool     `toml:"available" json:"available"`
	Supported   []string `toml:"supported,omitempty" json:"supported,omitempty"`
	Unsupported []string `toml:"unsupported,omitempty" json:"unsupported,omitempty"`
}

// Stat returns the statistics of metric m, or nil.
func (b *Bench) Stat(m string) *MetricStats {
	for i := range b.Metrics {
		if b.Metrics[i].Metric == m {
			return &b.Metrics[i]
		}
	}
	return nil
}
