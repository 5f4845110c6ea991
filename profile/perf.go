package profile

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
)

// perfSetup is what this machine's perf can do, found before each profile.
type perfSetup struct {
	path     string
	version  string
	event    string // the sampling event, with its ":u" suffix when user mode is all we may measure
	hardware bool
	suffix   string // ":u" or ""
}

// errPerfMissing is the one-line instruction when perf cannot be run at all.
func errPerfMissing(detail string) error {
	msg := "perf is not installed; install it with `apt-get install linux-perf` (Debian) or `apt-get install linux-tools-$(uname -r)` (Ubuntu)"
	if detail != "" {
		msg += " (" + detail + ")"
	}
	return errs.Failuref("%s", msg)
}

// errParanoid says what to set when the kernel keeps the jail's
// unprivileged user from profiling its own processes.
func errParanoid(level int) error {
	return errs.Failuref("the kernel forbids profiling to the jail's unprivileged user (kernel.perf_event_paranoid = %d); allow it with `sysctl -w kernel.perf_event_paranoid=2` as root", level)
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
	// perf runs in the jail, as an unprivileged user even when hone is
	// root: at level 2 it may count only user space, above it nothing.
	level := paranoid()
	if level > 2 {
		return nil, errParanoid(level)
	}
	if level == 2 {
		s.suffix = ":u"
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

// recordTool is the shell text of perf record, which the jail runs outside
// its system call filter and which starts the workload (jail.Spec.Tool).
// -N keeps perf from copying every binary into a build-id cache. callGraph
// is "fp" (-g) or "dwarf".
func (s *perfSetup) recordTool(data string, freq int, callGraph string) string {
	cg := "-g"
	if callGraph == CallGraphDWARF {
		cg = "--call-graph=dwarf"
	}
	return strings.Join([]string{
		jail.Quote(s.path), "record", "-q", "-N", cg, "-e", s.event, "-F", strconv.Itoa(freq),
		"-o", jail.Quote(data), "--",
	}, " ")
}

// statTool is the shell text of perf stat, as recordTool is of perf record.
func (s *perfSetup) statTool(out string) string {
	return strings.Join([]string{
		jail.Quote(s.path), "stat", "-x,", "-o", jail.Quote(out), "-e", statEventList(s.suffix), "--",
	}, " ")
}

// scriptCommand is the shell text that runs perf script over data, writing
// to out, with the fields ConvertPerfScript reads. Symbols stay mangled
// (hone demangles) and perf's own inline and srcline lookups stay off (hone
// reads DWARF itself, much faster).
func (s *perfSetup) scriptCommand(data, out string) string {
	return strings.Join([]string{
		jail.Quote(s.path), "script", "-i", jail.Quote(data), "-F", ScriptFields,
		"--no-demangle", "--no-inline", "--show-mmap-events", ">", jail.Quote(out),
	}, " ")
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
