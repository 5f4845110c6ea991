package verdict

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/perfstat"
	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/workspace"
)

func unitOf(metric string) string {
	if metric == workspace.MetricInstructions {
		return "instructions"
	}
	return "s"
}

// perfEvents are the counters hone asks perf stat for; the probe keeps those
// the machine supports.
var perfEvents = []string{"instructions:u", "cycles:u", "task-clock", "context-switches", "cpu-migrations", "page-faults"}

// meterMount is where perf and cachegrind write their counts in the jail,
// a folder of the run made fresh for each measured run.
const meterMount = "/hone/meter"

// measurer is the seam between the verdict's flow and the jail: gates and
// probes run through exec, bench runs through measure. The real one is
// meter; tests of the decision flow feed results and samples instead.
type measurer interface {
	// exec runs spec once, unmeasured beyond what the jail reports.
	exec(ctx context.Context, spec jail.Spec) (*jail.Result, error)
	// measure runs a bench command once and returns its values in
	// metric's tier (cpu-time and wall together, or instructions).
	measure(ctx context.Context, spec jail.Spec, metric string) (map[string]float64, *jail.Result, error)
	// counters runs spec once under perf stat for the informational
	// counters; nil counts when perf is not there.
	counters(ctx context.Context, spec jail.Spec) (map[string]float64, time.Duration)
}

// readsNoClock reports a meter whose figures come from no clock (the work
// meter of hone's test builds): what guards against time (the machine's
// bench turn, the slow cut) has nothing to guard there.
func readsNoClock(m measurer) bool {
	_, untimed := m.(interface{ untimed() })
	return untimed
}

// meter runs one bench command in the jail and turns it into metric
// values. In the time tiers the jail's own meter gives the CPU time of the
// command's whole process tree and its wall time, never the jail's start-up.
// In the instructions tier every run goes through perf stat (hardware
// counting) or cachegrind inside the jail.
type meter struct {
	instrVia string // "perf" or "valgrind" in the instructions tier
	perf     PerfInfo
	dir      string // the run folder, for the per-run count folders
	seq      atomic.Int64
}

// newMeter probes perf once, in a jail like the commands', and picks how
// instructions are counted. A missing tool the chosen metric needs is a
// Failure naming it.
func newMeter(ctx context.Context, metric string, run *build.Run, sb workspace.SandboxConfig) (*meter, error) {
	m := &meter{dir: run.Dir()}
	m.perf = probePerf(ctx, sb)
	if metric != workspace.MetricInstructions {
		return m, nil
	}
	switch {
	case m.perf.supports("instructions:u"):
		m.instrVia = "perf"
	case haveTool("valgrind"):
		m.instrVia = "valgrind"
	default:
		return nil, errs.Failuref("the instructions metric needs perf with a hardware instructions counter or valgrind; this machine has neither (install valgrind, or use --metric cpu-time)")
	}
	return m, nil
}

func haveTool(name string) bool { _, err := exec.LookPath(name); return err == nil }

func (p PerfInfo) supports(ev string) bool {
	for _, s := range p.Supported {
		if s == ev {
			return true
		}
	}
	return false
}

// probePerf asks perf stat, run as the jail user would run it, which of
// perfEvents count on this machine.
func probePerf(ctx context.Context, sb workspace.SandboxConfig) PerfInfo {
	if !haveTool("perf") {
		return PerfInfo{}
	}
	res, err := jail.Run(ctx, jail.Spec{
		Command:   "/bin/true",
		Tool:      "perf stat -x, -e " + strings.Join(perfEvents, ",") + " --",
		Isolation: sb.Isolation, Network: sb.Network, ReadOnly: sb.ReadOnly,
	})
	if err != nil || !res.Success() {
		return PerfInfo{}
	}
	counts, unsupported := parsePerfCSV(res.Stderr.Bytes(), perfEvents)
	info := PerfInfo{Available: true, Unsupported: unsupported}
	for _, ev := range perfEvents {
		if _, ok := counts[ev]; ok {
			info.Supported = append(info.Supported, ev)
		}
	}
	return info
}

// parsePerfCSV reads perf stat -x, output: counted events with their values,
// and the names of events perf reported as "<not supported>" or
// "<not counted>". An unprivileged perf counts user time only and says so
// by adding ":u" to events asked for without it; those are reported under
// the name asked for.
func parsePerfCSV(b []byte, asked []string) (map[string]float64, []string) {
	want := map[string]bool{}
	for _, ev := range asked {
		want[ev] = true
	}
	counts := map[string]float64{}
	var missing []string
	for _, r := range perfstat.Parse(b) {
		ev := r.Event
		if base, ok := strings.CutSuffix(ev, ":u"); ok && !want[ev] && want[base] {
			ev = base
		}
		if r.Counted && r.Value >= 0 {
			counts[ev] = r.Value
		} else if strings.HasPrefix(r.Raw, "<") {
			missing = append(missing, ev)
		}
	}
	return counts, missing
}

func (m *meter) exec(ctx context.Context, spec jail.Spec) (*jail.Result, error) {
	return jail.Run(ctx, spec)
}

// measure runs spec once and returns its metric values. The result is
// returned even when the command failed, for the caller to judge.
func (m *meter) measure(ctx context.Context, spec jail.Spec, metric string) (map[string]float64, *jail.Result, error) {
	if metric != workspace.MetricInstructions {
		res, err := jail.Run(ctx, spec)
		if err != nil {
			return nil, nil, err
		}
		return map[string]float64{workspace.MetricCPUTime: res.CPU().Seconds(), workspace.MetricWall: res.Wall.Seconds()}, res, nil
	}
	dir, err := m.countDir(&spec)
	if err != nil {
		return nil, nil, err
	}
	defer scratch.RemoveAll(dir)
	if m.instrVia == "perf" {
		spec.Tool = "perf stat -x, -o " + meterMount + "/perf.csv -e instructions:u --"
	} else {
		// Go programs are only deterministic under valgrind without
		// asynchronous preemption; the setting is inert for other programs.
		spec.Env = append(append([]string{}, spec.Env...), "GODEBUG=asyncpreemptoff=1")
		spec.Command = "valgrind -q --tool=cachegrind --cache-sim=no --trace-children=yes --cachegrind-out-file=" +
			meterMount + "/cg.%p sh -c " + jail.Quote(spec.Command)
	}
	res, err := jail.Run(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	var ir float64
	if m.instrVia == "perf" {
		counts, _ := parsePerfCSV(readCount(dir, "perf.csv"), []string{"instructions:u"})
		v, ok := counts["instructions:u"]
		if !ok && res.Success() {
			return nil, res, errs.Failuref("perf stat counted no instructions:u for %q", spec.Command)
		}
		ir = v
	} else {
		ir = cachegrindTotal(dir)
	}
	return map[string]float64{workspace.MetricInstructions: ir}, res, nil
}

// countDir makes a fresh folder of the run for one measured run's counts
// and mounts it into spec at meterMount.
func (m *meter) countDir(spec *jail.Spec) (string, error) {
	dir := filepath.Join(m.dir, "meter-"+strconv.FormatInt(m.seq.Add(1), 10))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot create a folder for the counts")
	}
	spec.Mounts = append(append([]jail.Mount{}, spec.Mounts...), jail.Mount{Host: dir, Jail: meterMount, Mode: jail.ReadWrite})
	return dir, nil
}

// readCount reads a count file the jail wrote, never through a symlink.
func readCount(dir, name string) []byte {
	f, err := build.OpenInTree(dir, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// cachegrindTotal sums the "summary:" lines (total Ir) of every cachegrind
// output file in dir: one per traced process.
func cachegrindTotal(dir string) float64 {
	ents, _ := os.ReadDir(dir)
	var total float64
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "cg.") {
			continue
		}
		for _, line := range strings.Split(string(readCount(dir, e.Name())), "\n") {
			if v, ok := strings.CutPrefix(line, "summary:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					if n, err := strconv.ParseFloat(f[0], 64); err == nil && n >= 0 {
						total += n
					}
				}
			}
		}
	}
	return total
}

// counters runs spec once under perf stat with every supported event, for
// the informational counters of the warm-up pair, and returns them with the
// run's wall time. The counts are nil when perf is unavailable or the run
// failed; the measured runs will report such a failure.
func (m *meter) counters(ctx context.Context, spec jail.Spec) (map[string]float64, time.Duration) {
	if !m.perf.Available || len(m.perf.Supported) == 0 {
		return nil, 0
	}
	dir, err := m.countDir(&spec)
	if err != nil {
		return nil, 0
	}
	defer scratch.RemoveAll(dir)
	spec.Tool = "perf stat -x, -o " + meterMount + "/perf.csv -e " + strings.Join(m.perf.Supported, ",") + " --"

	res, err := jail.Run(ctx, spec)
	if err != nil || !res.Success() {
		return nil, 0
	}
	counts, _ := parsePerfCSV(readCount(dir, "perf.csv"), m.perf.Supported)
	return counts, res.Wall
}
