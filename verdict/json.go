package verdict

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Counter is one perf counter of the warm-up runs on both sides, as the
// JSON form of a bench lists it. A side the machine could not count is
// absent, never zero.
type Counter struct {
	Event     string   `json:"event"`
	Baseline  *float64 `json:"baseline,omitempty"`
	Candidate *float64 `json:"candidate,omitempty"`
}

// Binary is one file of HONE_OUT with its sha256 on each side that built it.
type Binary struct {
	File      string `json:"file"`
	Baseline  string `json:"baseline_sha256,omitempty"`
	Candidate string `json:"candidate_sha256,omitempty"`
}

// MarshalJSON writes the bench with Counters filled from the counter maps,
// sorted by event, and without the maps: JSON field names are snake_case,
// and perf's event names (context-switches) are data. The TOML form keeps
// the maps, so entries written before this read as they always did.
// Counters is a declared field so that schemas inferred from the type (MCP's
// tool output) describe what is written.
func (b Bench) MarshalJSON() ([]byte, error) {
	type plain Bench
	p := plain(b)
	p.Counters = nil
	for _, ev := range unionKeys(b.BaselineCounters, b.CandidateCounters) {
		c := Counter{Event: ev}
		if v, ok := b.BaselineCounters[ev]; ok {
			c.Baseline = &v
		}
		if v, ok := b.CandidateCounters[ev]; ok {
			c.Candidate = &v
		}
		p.Counters = append(p.Counters, c)
	}
	return marshal(p)
}

// MarshalJSON writes the environment with Binaries filled from the binary
// maps, sorted by file, for the reason Bench's counters are a list.
func (e Environment) MarshalJSON() ([]byte, error) {
	type plain Environment
	p := plain(e)
	p.Binaries = nil
	for _, f := range unionKeys(e.BaselineBinary, e.CandidateBinary) {
		p.Binaries = append(p.Binaries, Binary{File: f, Baseline: e.BaselineBinary[f], Candidate: e.CandidateBinary[f]})
	}
	return marshal(p)
}

// marshal is json.Marshal without HTML escaping, like hone's printer, so a
// command such as "prog > /dev/null && true" reads as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
