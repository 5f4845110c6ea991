package verdict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// Counters and binaries are maps keyed by perf event and file names in TOML
// (as entries have always been written) and lists with snake_case keys in
// JSON; a side that could not count an event stays absent, never zero.
func TestCountersAndBinariesAreListsInJSON(t *testing.T) {
	const stored = `
[bench]
command = "prog > /dev/null && true"
metric = "cpu-time"
[bench.baseline_counters]
context-switches = 3.0
task-clock = 12.5
[bench.candidate_counters]
task-clock = 6.25
[environment]
host = "h"
[environment.baseline_binary]
"prog.bin" = "aa"
[environment.candidate_binary]
"prog.bin" = "bb"
`
	var e Entry
	if _, err := toml.Decode(stored, &e); err != nil {
		t.Fatal(err)
	}
	if e.Bench.BaselineCounters["context-switches"] != 3 || e.Environment.CandidateBinary["prog.bin"] != "bb" {
		t.Fatalf("an entry written with maps no longer reads: %+v %+v", e.Bench, e.Environment)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b) // as hone prints: no HTML escaping
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&e); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		`"counters":[{"event":"context-switches","baseline":3},{"event":"task-clock","baseline":12.5,"candidate":6.25}]`,
		`"binaries":[{"file":"prog.bin","baseline_sha256":"aa","candidate_sha256":"bb"}]`,
		`"command":"prog > /dev/null && true"`,
		`"metric":"cpu-time"`, `"host":"h"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("JSON lacks %s:\n%s", want, got)
		}
	}
	for _, gone := range []string{"baseline_counters", "context-switches\":", "baseline_binary"} {
		if strings.Contains(got, gone) {
			t.Errorf("JSON still has %s:\n%s", gone, got)
		}
	}
}
