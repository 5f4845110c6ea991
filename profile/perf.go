package profile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/sandbox"
)

// perfSetup is what this machine's perf can do, found before each profile.
type perfSetup struct {
	path     string
	version  string
	event    string // the sampling event, with its ":u" suffix when user mode is all we may measure
	hardware bool
	suffix   string // ":u" or ""
	// procPrefix goes before perf inside a PID namespace: perf reads /proc to
	// follow the workload, and refuses a /proc that belongs to the parent
	// namespace, so it gets a mount namespace with its own /proc.
	procPrefix string
}

// errPerfMissing is the one-line instruction when perf cannot be run at all.
func errPerfMissing(detail string) error {
	msg := "perf is not installed; install it with `apt-get install linux-perf` (Debian) or `apt-get install linux-tools-$(uname -r)` (Ubuntu)"
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return errs.Failuref("%s", msg)
}

func errParanoid(level int) error {
	return errs.Failuref("the kernel forbids profiling (kernel.perf_event_paranoid = %d); allow it with `sysctl kernel.perf_event_paranoid=1` as root", level)
}

// probePerf checks that perf runs and picks the sampling event: a hardware
// cycles event where the CPU exposes one, otherwise the software cpu-clock.
func probePerf(ctx context.Context) (*perfSetup, error) {
	path, err := exec.LookPath("perf")
	if err != nil {
		return nil, errPerfMissing("")
	}
	out, err := exec.CommandContext(ctx, path, "version").CombinedOutput()
	if err != nil {
		// Ubuntu's wrapper script exists without the kernel's matching tools.
		return nil, errPerfMissing(firstLine(out))
	}
	s := &perfSetup{path: path, version: strings.TrimPrefix(strings.TrimSpace(string(out)), "perf version ")}
	level := paranoid()
	if os.Geteuid() != 0 {
		if level > 2 {
			return nil, errParanoid(level)
		}
		if level == 2 {
			s.suffix = ":u"
		}
	}
	out, err = exec.CommandContext(ctx, path, "stat", "-x,", "-e", "cycles"+s.suffix, "true").CombinedOutput()
	if bytes.Contains(out, []byte("perf_event_paranoid")) {
		return nil, errParanoid(level)
	}
	s.hardware = err == nil && !bytes.Contains(out, []byte("<not supported>")) && !bytes.Contains(out, []byte("<not counted>"))
	s.event = "cpu-clock" + s.suffix
	if s.hardware {
		s.event = "cycles" + s.suffix
	}
	return s, nil
}

// inPIDNamespace prepares perf to run inside the sandbox's PID namespace.
func (s *perfSetup) inPIDNamespace() error {
	u, err := exec.LookPath("unshare")
	if err != nil {
		return errs.Failuref("profiling inside hone's sandbox (a PID namespace) needs unshare; install it with `apt-get install util-linux`")
	}
	s.procPrefix = sandbox.Quote(u) + " --mount --mount-proc "
	return nil
}

// paranoid reads kernel.perf_event_paranoid; -1 (no restriction) when unreadable.
func paranoid() int {
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// recordCommand is the shell text that runs the workload under perf record.
// -N keeps perf from copying every binary into a build-id cache. callGraph
// is "fp" (-g) or "dwarf".
func (s *perfSetup) recordCommand(data string, freq int, callGraph, workload string) string {
	cg := "-g"
	if callGraph == CallGraphDWARF {
		cg = "--call-graph=dwarf"
	}
	return s.procPrefix + strings.Join([]string{
		sandbox.Quote(s.path), "record", "-q", "-N", cg, "-e", s.event, "-F", strconv.Itoa(freq),
		"-o", sandbox.Quote(data), "--", "/bin/sh", "-c", sandbox.Quote(workload),
	}, " ")
}

// statCommand is the shell text that runs the workload once under perf stat.
func (s *perfSetup) statCommand(out, workload string) string {
	return s.procPrefix + strings.Join([]string{
		sandbox.Quote(s.path), "stat", "-x,", "-o", sandbox.Quote(out), "-e", statEventList(s.suffix),
		"--", "/bin/sh", "-c", sandbox.Quote(workload),
	}, " ")
}

// scriptCommand runs perf script over data with the fields ConvertPerfScript
// reads. Symbols stay mangled (hone demangles) and perf's own inline and
// srcline lookups stay off (hone reads DWARF itself, much faster).
func (s *perfSetup) scriptCommand(ctx context.Context, data string) *exec.Cmd {
	return exec.CommandContext(ctx, s.path, "script", "-i", data, "-F", ScriptFields,
		"--no-demangle", "--no-inline", "--show-mmap-events")
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
