package jail

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// Each test here makes, from inside the jail, the calls a run could use to
// read or steer kernel state that outlives it (the page cache, keyrings,
// another process's memory), and checks that the filter refused them with
// EPERM while an honest program's calls still work.

var probed = []string{
	"readahead", "fadvise64", "mincore", "cachestat", "preadv2-nowait", "pwritev2-nowait",
	"madvise-willneed", "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
	"perf_event_open", "add_key", "keyctl", "request_key", "process_vm_readv", "process_vm_writev", "ptrace",
}

// probeIn runs the probe attack and returns each call's outcome; with a tool,
// the tool's own outcomes too.
func probeIn(t *testing.T, s Spec) (calls, tool map[string]string, res *Result) {
	t.Helper()
	s.Mounts = append(s.Mounts, attackMount(t))
	s.Command = attackPath + " probe"
	res = run(t, s)
	if !res.Success() {
		t.Fatalf("the probe failed: %s\n%s%s", res.Describe(), res.Stdout.Bytes(), res.Stderr.Tail(2000))
	}
	sections := map[string]map[string]string{"command:": {}}
	cur := sections["command:"]
	for _, line := range strings.Split(string(res.Stdout.Bytes()), "\n") {
		if line == "tool:" || line == "command:" {
			cur = map[string]string{}
			sections[line] = cur
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			cur[k] = v
		}
	}
	calls, tool = sections["command:"], sections["tool:"]
	return calls, tool, res
}

func TestCandidateCannotProbeSharedKernelState(t *testing.T) {
	tier.Jail(t)
	calls, _, res := probeIn(t, Spec{})
	for _, name := range probed {
		if calls[name] != "EPERM" {
			t.Errorf("%s: %q, want EPERM from the filter", name, calls[name])
		}
	}
	for _, name := range []string{"honest-preadv2", "honest-madvise"} {
		if calls[name] != "ok" {
			t.Errorf("%s: %q under the filter, want ok", name, calls[name])
		}
	}
	if res.Seccomp != FilterVersion {
		t.Errorf("Result.Seccomp = %q, want %q", res.Seccomp, FilterVersion)
	}
}

// Without the filter the same probes reach the kernel: the filter, not
// something else in the jail, is what refuses them.
func TestProbesReachTheKernelWithoutTheFilter(t *testing.T) {
	tier.Jail(t)
	calls, _, res := probeIn(t, Spec{Seccomp: Seccomp{Off: true}})
	for _, name := range []string{"readahead", "fadvise64", "mincore", "madvise-willneed", "preadv2-nowait", "process_vm_readv"} {
		if calls[name] == "EPERM" {
			t.Errorf("%s: EPERM without the filter; the test cannot tell the filter's refusal from another", name)
		}
	}
	if res.Seccomp != "" {
		t.Errorf("Result.Seccomp = %q without the filter, want empty", res.Seccomp)
	}
}

func TestOnlySanitizerGatesMayTrace(t *testing.T) {
	tier.Jail(t)
	calls, _, _ := probeIn(t, Spec{Seccomp: Seccomp{Ptrace: true}})
	if calls["ptrace"] == "EPERM" {
		t.Errorf("ptrace refused with Seccomp.Ptrace: LeakSanitizer could not stop the threads it checks")
	}
	if calls["readahead"] != "EPERM" {
		t.Errorf("readahead %q with Seccomp.Ptrace, want EPERM: only ptrace is let through", calls["readahead"])
	}
}

// perf stat opens its counters in the jail: a run with a tool may call
// perf_event_open, and nothing else the filter denies, tool and command
// alike.
func TestMeasuringToolMayOpenCountersAndNothingElse(t *testing.T) {
	tier.Jail(t)
	calls, tool, res := probeIn(t, Spec{Tool: attackPath + " tool"})
	if tool == nil {
		t.Fatalf("the tool did not run: %s", res.Stdout.Bytes())
	}
	unfiltered, _, _ := probeIn(t, Spec{Seccomp: Seccomp{Off: true}})
	for _, name := range probed {
		for who, got := range map[string]map[string]string{"the tool": tool, "the command": calls} {
			switch {
			case name != "perf_event_open" && got[name] != "EPERM":
				t.Errorf("%s: %q in %s, want EPERM", name, got[name], who)
			case name == "perf_event_open" && got[name] != unfiltered[name]:
				t.Errorf("perf_event_open: %q in %s, %q without the filter: want it let through", got[name], who, unfiltered[name])
			}
		}
	}
	if res.Seccomp != FilterVersion {
		t.Errorf("Result.Seccomp = %q, want %q", res.Seccomp, FilterVersion)
	}
}

func TestOperatorCanTurnTheFilterOff(t *testing.T) {
	tier.Jail(t)
	t.Setenv("HONE_SECCOMP", "off")
	calls, _, res := probeIn(t, Spec{})
	if calls["readahead"] == "EPERM" || res.Seccomp != "" {
		t.Errorf("HONE_SECCOMP=off: readahead %q, Result.Seccomp %q; want the filter off and said so", calls["readahead"], res.Seccomp)
	}
}

// The 32-bit ABI (int $0x80) has call numbers of its own, which a filter
// for x86_64's would let through: every such call is refused.
func TestCandidateCannotUseThe32BitABI(t *testing.T) {
	tier.Jail(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("x86_64 only")
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	// i386 getpid is call 20; the kernel returns -errno in eax.
	writeFile(t, dir, "abi32.c", "#include <stdio.h>\nint main(void) { int r; __asm__ volatile(\"int $0x80\" : \"=a\"(r) : \"a\"(20)); printf(\"%d\\n\", r); return 0; }\n", 0o644)
	cmd := exec.Command("cc", "-O2", "-o", "abi32", "abi32.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cc: %v\n%s", err, out)
	}
	spec := Spec{Command: "/t/abi32", Mounts: []Mount{{Host: dir, Jail: "/t", Mode: ReadOnly}}}
	on := strings.TrimSpace(string(run(t, spec).Stdout.Bytes()))
	spec.Seccomp.Off = true
	off := strings.TrimSpace(string(run(t, spec).Stdout.Bytes()))
	// A kernel without the 32-bit ABI kills the program at int $0x80
	// (SIGSEGV, no output), filter or not: there is nothing to refuse.
	if off == "-1" || off == "" {
		t.Skipf("the kernel has no 32-bit ABI (getpid without the filter: %q)", off)
	}
	if on != "-1" {
		t.Errorf("a 32-bit getpid under the filter returned %q, want -1 (EPERM)", on)
	}
}

// perf stat, as the verdict's meter runs it, still counts under the filter.
func TestPerfCountsUnderTheFilter(t *testing.T) {
	tier.Jail(t)
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("no perf")
	}
	res := run(t, Spec{Command: "/bin/true", Tool: "perf stat -x, -e task-clock --"})
	if !res.Success() || !strings.Contains(string(res.Stderr.Bytes()), "task-clock") || strings.Contains(string(res.Stderr.Bytes()), "<not supported>") {
		t.Errorf("perf stat under the filter: %s\n%s", res.Describe(), res.Stderr.Bytes())
	}
}
