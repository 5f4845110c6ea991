package profile

import (
	"github.com/hone-perf/hone/ledger"
)

// Entry is a profile as kept in the ledger (kind "profile"): the summary an
// optimizer reads, with the full pprof stored beside it as the attachment
// AttachmentName. Fields are only ever added.
type Entry struct {
	ledger.Common

	Source  string `toml:"source" json:"source"`   // "perf" or "pprof" (the target wrote it)
	Command string `toml:"command" json:"command"` // the workload, as in hone.toml
	// InputSeed is what the workload got as {seed} and HONE_SEED, drawn
	// afresh for the profile as for every verdict.
	InputSeed int64  `toml:"input_seed,omitempty" json:"input_seed,omitempty"`
	Event     string `toml:"event" json:"event"`                               // perf event sampled ("cpu-clock", "cycles:u") or the pprof sample type
	Hardware  bool   `toml:"hardware" json:"hardware"`                         // Event is a hardware counter, not a software clock
	Frequency int    `toml:"frequency,omitempty" json:"frequency,omitempty"`   // sampling frequency asked of perf, Hz
	CallGraph string `toml:"call_graph,omitempty" json:"call_graph,omitempty"` // how perf unwound stacks: "fp" or "dwarf"
	// CallGraphReason says why: hone.toml named the mode, or how many
	// stacks each mode unwound past the sampled function.
	CallGraphReason string `toml:"call_graph_reason,omitempty" json:"call_graph_reason,omitempty"`
	Samples         int64  `toml:"samples" json:"samples"`
	ValueType       string `toml:"value_type" json:"value_type"` // what the percentages are shares of, e.g. "cpu/nanoseconds"

	Hotspots []Hotspot `toml:"hotspots" json:"hotspots"` // the top MaxHotspots, hottest first
	Counters []Counter `toml:"counters" json:"counters"`

	Binary      string      `toml:"binary,omitempty" json:"binary,omitempty"`           // the profiled file holding most samples
	BinaryHash  string      `toml:"binary_hash,omitempty" json:"binary_hash,omitempty"` // its sha256
	Isolation   string      `toml:"isolation" json:"isolation"`                         // what the workload ran under
	Environment Environment `toml:"environment" json:"environment"`
	Pprof       string      `toml:"pprof" json:"pprof"` // name of the attachment holding the gzipped pprof
}

// Counter is one `perf stat` figure. A counter the machine cannot count is
// listed with Supported false and no value: absent, never zero.
type Counter struct {
	Name      string   `toml:"name" json:"name"`
	Value     *float64 `toml:"value,omitempty" json:"value,omitempty"`
	Unit      string   `toml:"unit,omitempty" json:"unit,omitempty"`
	Supported bool     `toml:"supported" json:"supported"`
}

// Environment fingerprints the machine a profile was taken on.
type Environment struct {
	Kernel      string `toml:"kernel" json:"kernel"`
	CPU         string `toml:"cpu" json:"cpu"`
	CPUs        int    `toml:"cpus" json:"cpus"`
	LoadAvg     string `toml:"load_avg" json:"load_avg"` // 1, 5 and 15 minute load before the run
	PerfVersion string `toml:"perf_version,omitempty" json:"perf_version,omitempty"`
}

// AttachmentName is the suffix of the gzipped pprof stored beside each entry.
const AttachmentName = "pb.gz"

// MaxHotspots is how many hotspots an entry keeps.
const MaxHotspots = 50

// Top returns a copy of e with at most n hotspots (all when n <= 0): the view
// `hone profile show` and read_profile return.
func (e *Entry) Top(n int) *Entry {
	v := *e
	if n > 0 && len(v.Hotspots) > n {
		v.Hotspots = v.Hotspots[:n]
	}
	return &v
}
