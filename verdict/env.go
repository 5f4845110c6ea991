package verdict

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/hostinfo"
	"github.com/hone-perf/hone/internal/jail"
)

// hostFacts fills the machine part of the fingerprint: host, kernel, CPU,
// load and tool versions.
func hostFacts(ctx context.Context, e *Environment) {
	e.Host, _ = os.Hostname()
	e.Kernel = hostinfo.Kernel()
	e.CPUModel = hostinfo.CPUModel()
	e.CPUs = runtime.NumCPU()
	e.LoadAvg = hostinfo.LoadAvg()
	e.Tools = map[string]string{}
	if v, err := git.Output(ctx, "", "--version"); err == nil {
		e.Tools["git"] = v
	}
	for tool, args := range map[string][]string{
		"cc": {"--version"}, "go": {"version"}, "perf": {"--version"}, "valgrind": {"--version"},
	} {
		if v := toolVersion(ctx, tool, args...); v != "" {
			e.Tools[tool] = v
		}
	}
}

func toolVersion(ctx context.Context, tool string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// noteJail records what one run's jail reported about the isolation it had.
// The first run decides the isolation and cgroup facts; a later run
// without a cgroup clears Cgroup.
func (e *Environment) noteJail(res *jail.Result) {
	if res == nil {
		return
	}
	if !e.jailSeen {
		e.jailSeen = true
		e.Isolation, e.NetworkDenied, e.JailUID, e.Cgroup = res.Isolation, res.NetworkDenied, res.HostUID, res.Cgroup
		e.Seccomp = res.Seccomp
	}
	if res.Seccomp != e.Seccomp {
		// One run without the filter (or with another) and the verdict
		// cannot claim it.
		e.Seccomp = ""
	}
	e.Cgroup = e.Cgroup && res.Cgroup
	e.JailUserCreated = e.JailUserCreated || res.UserCreated
}
