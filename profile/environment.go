package profile

import (
	"runtime"

	"github.com/hone-perf/hone/internal/hostinfo"
)

// environment fingerprints this machine just before a run. perf may be nil
// (a pprof-format target on a machine without perf).
func environment(perf *perfSetup) Environment {
	e := Environment{CPUs: runtime.NumCPU(), CPU: hostinfo.CPUModel(), Kernel: hostinfo.Kernel(), LoadAvg: hostinfo.LoadAvg()}
	if perf != nil {
		e.PerfVersion = perf.version
	}
	return e
}
