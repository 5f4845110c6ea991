//go:build hone_testmeter

package verdict

import (
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/testbuild"
	"github.com/hone-perf/hone/workspace"
)

// workMeter is the meter of hone's test builds (internal/testbuild). It runs
// every bench command for real, in the same jail, with the same outputs
// checked, but takes the run's figure from the work the program says it did
// ("hone-work: N" lines on stderr, summed over every process of the run)
// instead of from the clock: a run costs workFixed plus N units. A test
// whose subject is a rule (a memo the jail must hide, a risk signal, a
// claim) then gets the same decision on an idle machine and beside two
// hogs; only the measurement tier, which sets HONE_TIER=measure, uses the
// real meter. The entries it makes carry ledger.FlagTestMeter.
type workMeter struct{ *meter }

// workFixed is a run's cost before any declared work, in units: what
// starting a process costs, so that a run which declares nothing costs the
// same on both sides and one that skips its work is faster, not free.
const workFixed = 1e6

// workUnitSeconds is one unit of declared work in the time metrics.
const workUnitSeconds = 1e-9

// testMeter is the work meter over m, unless the measurement tier asked
// for the real one.
func testMeter(m *meter) measurer {
	if os.Getenv(testbuild.TierEnv) == testbuild.MeasureTier {
		return nil
	}
	return workMeter{m}
}

func (workMeter) untimed() {}

func (w workMeter) measure(ctx context.Context, spec jail.Spec, metric string) (map[string]float64, *jail.Result, error) {
	res, err := jail.Run(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	units := workFixed + declaredWork(&res.Stderr)
	if metric == workspace.MetricInstructions {
		return map[string]float64{workspace.MetricInstructions: units}, res, nil
	}
	s := units * workUnitSeconds
	return map[string]float64{workspace.MetricCPUTime: s, workspace.MetricWall: s}, res, nil
}

// counters are the hardware's; the work meter has none to report.
func (workMeter) counters(context.Context, jail.Spec) (map[string]float64, time.Duration) {
	return nil, 0
}

// declaredWork sums the "hone-work: N" lines of a run's stderr.
func declaredWork(o *jail.Output) float64 {
	b := o.Bytes()
	if o.Truncated() {
		b = o.Tail(8 << 10)
	}
	var total float64
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "hone-work:"); ok {
			if n, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && n > 0 {
				total += n
			}
		}
	}
	return total
}
