package verdict

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/perfstat"
	"github.com/hone-perf/hone/internal/sandbox"
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

// meter runs one bench command and turns it into metric values. In the
// instructions tier every run goes through perf stat (hardware counting) or
// cachegrind; in the time tiers runs are plain, so rusage and wall time
// measure only the workload (and its shell).
type meter struct {
	metric   string
	instrVia string // "perf" or "valgrind" in the instructions tier
	perf     PerfInfo
	scratch  string // folder for perf and cachegrind output files
}

// newMeter probes perf once and picks how instructions are counted. A
// missing tool the chosen metric needs is a Failure naming it.
func newMeter(ctx context.Context, metric, scratch string) (*meter, error) {
	m := &meter{metric: metric, scratch: scratch}
	m.perf = probePerf(ctx, scratch)
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

// probePerf asks perf stat which of perfEvents count on this machine.
func probePerf(ctx context.Context, scratch string) PerfInfo {
	if !haveTool("perf") {
		return PerfInfo{}
	}
	out := filepath.Join(scratch, "perf-probe.csv")
	res, err := sandbox.Run(ctx, sandbox.Spec{Dir: scratch, Command: "perf stat -x, -o " + sandbox.Quote(out) + " -e " + strings.Join(perfEvents, ",") + " -- /bin/true"})
	if err != nil || !res.Success() {
		return PerfInfo{}
	}
	counts, unsupported := parsePerfCSV(out)
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
// "<not counted>".
func parsePerfCSV(path string) (map[string]float64, []string) {
	b, err := os.ReadFile(path)
	os.Remove(path)
	if err != nil {
		return nil, nil
	}
	counts := map[string]float64{}
	var missing []string
	for _, r := range perfstat.Parse(b) {
		if r.Counted {
			counts[r.Event] = r.Value
		} else if strings.HasPrefix(r.Raw, "<") {
			missing = append(missing, r.Event)
		}
	}
	return counts, missing
}

// measure runs spec once and returns its metric values. The result is
// returned even when the command failed, for the caller to judge.
func (m *meter) measure(ctx context.Context, spec sandbox.Spec) (map[string]float64, *sandbox.Result, error) {
	if m.metric != workspace.MetricInstructions {
		res, err := sandbox.Run(ctx, spec)
		if err != nil {
			return nil, nil, err
		}
		return map[string]float64{workspace.MetricCPUTime: res.CPU().Seconds(), workspace.MetricWall: res.Wall.Seconds()}, res, nil
	}
	dir, err := os.MkdirTemp(m.scratch, "run-")
	if err != nil {
		return nil, nil, errs.Wrap(errs.Failure, err, "cannot create a scratch folder")
	}
	defer os.RemoveAll(dir)
	inner := sandbox.Quote(spec.Command)
	if m.instrVia == "perf" {
		spec.Command = "perf stat -x, -o " + sandbox.Quote(filepath.Join(dir, "perf.csv")) + " -e instructions:u -- sh -c " + inner
	} else {
		// Go programs are only deterministic under valgrind without
		// asynchronous preemption; the setting is inert for other programs.
		spec.Env = append(append([]string{}, spec.Env...), "GODEBUG=asyncpreemptoff=1")
		spec.Command = "valgrind -q --tool=cachegrind --cache-sim=no --trace-children=yes --cachegrind-out-file=" +
			sandbox.Quote(filepath.Join(dir, "cg.%p")) + " sh -c " + inner
	}
	res, err := sandbox.Run(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	var ir float64
	if m.instrVia == "perf" {
		counts, _ := parsePerfCSV(filepath.Join(dir, "perf.csv"))
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

// cachegrindTotal sums the "summary:" lines (total Ir) of every cachegrind
// output file in dir: one per traced process.
func cachegrindTotal(dir string) float64 {
	files, _ := filepath.Glob(filepath.Join(dir, "cg.*"))
	var total float64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "summary:"); ok {
				if n, err := strconv.ParseFloat(strings.Fields(v)[0], 64); err == nil {
					total += n
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
func (m *meter) counters(ctx context.Context, spec sandbox.Spec) (map[string]float64, time.Duration) {
	if !m.perf.Available || len(m.perf.Supported) == 0 {
		return nil, 0
	}
	out := filepath.Join(m.scratch, "perf-warmup.csv")
	spec.Command = "perf stat -x, -o " + sandbox.Quote(out) + " -e " + strings.Join(m.perf.Supported, ",") + " -- sh -c " + sandbox.Quote(spec.Command)
	res, err := sandbox.Run(ctx, spec)
	counts, _ := parsePerfCSV(out)
	if err != nil || !res.Success() {
		return nil, 0
	}
	return counts, res.Wall
}
