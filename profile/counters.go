package profile

import (
	"strings"

	"github.com/hone-perf/hone/internal/perfstat"
)

// statEvents are the counters asked of `perf stat`, in the order reported.
var statEvents = []string{"instructions", "cycles", "task-clock", "context-switches", "page-faults", "cache-misses", "branch-misses"}

// statEventList is the -e argument: hardware events are counted in user mode
// when the kernel only allows that (suffix ":u").
func statEventList(suffix string) string {
	ev := make([]string, len(statEvents))
	for i, e := range statEvents {
		ev[i] = e
		if isHardwareEvent(e) {
			ev[i] += suffix
		}
	}
	return strings.Join(ev, ",")
}

func isHardwareEvent(e string) bool {
	switch e {
	case "instructions", "cycles", "cache-misses", "branch-misses", "cache-references", "branches":
		return true
	}
	return false
}

// parseStat reads `perf stat -x,` output into counters, in statEvents order,
// adding IPC when both instructions and cycles were counted. A line whose value
// is "<not supported>" or "<not counted>" gives a counter with no value.
func parseStat(out []byte) []Counter {
	found := map[string]Counter{}
	for _, r := range perfstat.Parse(out) {
		name, _, _ := strings.Cut(r.Event, ":")
		c := Counter{Name: name, Unit: r.Unit}
		switch {
		case r.Raw == "<not supported>":
		case r.Raw == "<not counted>":
			c.Supported = true
		case r.Counted:
			v := r.Value
			c.Supported, c.Value = true, &v
		default:
			continue
		}
		found[name] = c
	}
	var counters []Counter
	for _, e := range statEvents {
		if c, ok := found[e]; ok {
			counters = append(counters, c)
		}
	}
	ins, cyc := found["instructions"], found["cycles"]
	if ins.Value != nil && cyc.Value != nil && *cyc.Value > 0 {
		ipc := *ins.Value / *cyc.Value
		counters = append(counters, Counter{Name: "ipc", Value: &ipc, Supported: true})
	} else {
		counters = append(counters, Counter{Name: "ipc", Supported: ins.Supported && cyc.Supported})
	}
	return counters
}
