package profile

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
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
	all      int64 // every sample
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
		h.all += n
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
	if err := perf.unwindsDWARF(ctx, r.tmp); err != nil {
		e.CallGraphReason = fmt.Sprintf("frame pointers named the caller in only %s; this perf cannot record with DWARF unwinding (%s), so their stacks are kept", fp, err)
		return p, nil
	}
	dfreq := dwarfFrequency(freq, fp.all)
	r.step(fmt.Sprintf("frame pointers named the caller in only %s; recording again with DWARF unwinding at %d Hz", fp, dfreq))
	fpEntry := *e
	pd, err := r.record(ctx, perf, dfreq, CallGraphDWARF, e)
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
	if dfreq < freq {
		e.CallGraphReason += fmt.Sprintf(", recorded at %d Hz to keep its stack copies under %d MB", dfreq, maxDWARFSamples*dwarfSampleBytes>>20)
	}
	return pd, nil
}

// A DWARF-unwound sample carries a copy of the top of the stack (perf's
// default 8 KiB), so a long workload at full rate would write gigabytes.
// maxDWARFSamples bounds the second recording to about 500 MB.
const (
	dwarfSampleBytes = 8192 + 256
	maxDWARFSamples  = 60000
)

// dwarfFrequency lowers freq for the DWARF recording in proportion to how
// far the frame-pointer recording's samples exceeded maxDWARFSamples: the
// workload is the same, so it runs as long.
func dwarfFrequency(freq int, samples int64) int {
	if samples <= maxDWARFSamples {
		return freq
	}
	return max(1, int(int64(freq)*maxDWARFSamples/samples))
}

// unwindsDWARF records `true` with DWARF unwinding: a perf built without
// an unwinder refuses, and says why.
func (s *perfSetup) unwindsDWARF(ctx context.Context, dir string) error {
	out, err := exec.CommandContext(ctx, s.path, "record", "-q", "-N", "--call-graph=dwarf", "-e", s.event,
		"-o", filepath.Join(dir, "dwarf-probe.data"), "--", "true").CombinedOutput()
	if err == nil {
		return nil
	}
	if msg := firstLine(out); msg != "" {
		return errors.New(msg)
	}
	return err
}
