package profile

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/pprof/profile"
)

// Call-graph modes of perf record, as [targets.X.profile] call_graph names them.
const (
	CallGraphFP    = "fp"    // frame pointers: cheap, but blind to code built without them
	CallGraphDWARF = "dwarf" // a copy of each sample's stack, unwound with the binary's CFI
)

// stackHealth counts, by samples, how many user-space stacks perf unwound
// past the sampled function. Kernel frames are left out: perf unwinds the
// kernel's own stack separately and always well.
type stackHealth struct {
	user     int64 // samples with at least one user-space frame
	resolved int64 // of those, samples with a named caller of the leaf
}

// truncated reports whether most stacks stopped at their leaf: the sign of
// code built without frame pointers (-O2 omits them), whose callers
// frame-pointer unwinding cannot find.
func (h stackHealth) truncated() bool {
	return h.user > 0 && 2*h.resolved < h.user
}

func (h stackHealth) String() string {
	return fmt.Sprintf("%d of %d samples", h.resolved, h.user)
}

// checkStacks measures p's stacks. A caller counts as named when perf found
// its symbol: frame-pointer unwinding through a function without a frame
// pointer either stops at once or reads a garbage address, which perf
// prints as [unknown].
func checkStacks(p *profile.Profile) stackHealth {
	_, ni := valueIndex(p)
	var h stackHealth
	for _, s := range p.Sample {
		n := int64(1)
		if ni >= 0 {
			n = s.Value[ni]
		}
		user := 0
		named := false
		for _, l := range s.Location {
			if kernel(l) {
				continue
			}
			user++
			if user > 1 && symbolized(l) {
				named = true
				break
			}
		}
		if user == 0 {
			continue
		}
		h.user += n
		if named {
			h.resolved += n
		}
	}
	return h
}

func kernel(l *profile.Location) bool {
	return l.Mapping != nil && strings.HasPrefix(l.Mapping.File, "[kernel")
}

// symbolized reports whether perf named l's function; unnamed code carries
// its file's label in brackets ("[unknown]", "[libc.so.6]").
func symbolized(l *profile.Location) bool {
	for _, ln := range l.Line {
		if ln.Function != nil && ln.Function.Name != "" && !strings.HasPrefix(ln.Function.Name, "[") {
			return true
		}
	}
	return false
}

// recordStacks records the workload with the call-graph mode hone.toml names,
// or chooses one: frame pointers first, and when most of their stacks stop
// at the sampled function, a second recording unwound with DWARF, kept if it
// names more callers. e says which mode was used and why.
func (r *runner) recordStacks(ctx context.Context, perf *perfSetup, freq int, e *Entry) (*profile.Profile, error) {
	if mode := r.t.Profile.CallGraph; mode != "" {
		e.CallGraphReason = "set by [targets." + r.t.Name + ".profile] call_graph"
		return r.record(ctx, perf, freq, mode, e)
	}
	p, err := r.record(ctx, perf, freq, CallGraphFP, e)
	if err != nil {
		return nil, err
	}
	fp := checkStacks(p)
	if !fp.truncated() {
		e.CallGraphReason = fmt.Sprintf("frame pointers named the caller in %s", fp)
		return p, nil
	}
	r.step(fmt.Sprintf("frame pointers named the caller in only %s; recording again with DWARF unwinding", fp))
	fpEntry := *e
	pd, err := r.record(ctx, perf, freq, CallGraphDWARF, e)
	if err != nil {
		return nil, err
	}
	dw := checkStacks(pd)
	if dw.resolved*fp.user <= fp.resolved*dw.user {
		*e = fpEntry
		e.CallGraphReason = fmt.Sprintf("frame pointers named the caller in only %s, DWARF unwinding in %s, no better", fp, dw)
		return p, nil
	}
	e.CallGraphReason = fmt.Sprintf("frame pointers named the caller in only %s (code without frame pointers), DWARF unwinding in %s", fp, dw)
	return pd, nil
}
