package jail

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/errs"
)

// The system call filter is depth behind fresh inputs: a run that could
// read or steer state the kernel shares between runs (which pages of a
// system file are cached, a keyring, another process's memory, a ring of
// asynchronous I/O the filter cannot look into) could carry answers from
// one run to the next. Each denied call fails with EPERM, never kills, so
// an honest program that only hints (readahead, fadvise) keeps working.
//
// FilterVersion names the rules below; it changes whenever they do, and
// every verdict records the version its runs had.
const FilterVersion = "hone-seccomp-1"

// Seccomp chooses the filter of one run. The zero value is the full filter.
type Seccomp struct {
	// Off runs without the filter. The operator's HONE_SECCOMP=off sets it
	// for every run, to measure what the filter costs or stops; a verdict
	// records that its runs had none.
	Off bool
	// Ptrace allows ptrace: LeakSanitizer stops the threads of the process
	// it checks by tracing them. Only sanitizer gates ask for it.
	Ptrace bool
}

// deniedCalls are refused outright.
var deniedCalls = []string{
	// Page-cache residency: set, clear and read one bit per page of a
	// file every run can open.
	"readahead", "fadvise64", "mincore", "cachestat",
	// Rings the filter cannot see into: each submitted operation is a
	// system call the filter never checks.
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"userfaultfd", "perf_event_open",
	// The kernel's keyrings outlive a run.
	"add_key", "keyctl", "request_key",
	"process_vm_readv", "process_vm_writev",
}

// Flags that turn an ordinary call into a probe: RWF_NOWAIT makes
// preadv2 fail rather than block on a page that is not cached, which reads
// a residency bit; MADV_WILLNEED on a file mapping sets one, as readahead
// would.
const (
	rwfNowait    = 0x8
	madvWillneed = 3
)

// policy is the filter's rules for x86_64 (and any architecture the
// library knows by GOARCH).
func policy(ptrace bool) seccomp.Policy {
	names := append([]string{}, deniedCalls...)
	if !ptrace {
		names = append(names, "ptrace")
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: names},
			{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
				{Name: "preadv2", Conditions: seccomp.ArgumentConditions{{Argument: 5, Operation: seccomp.BitsSet, Value: rwfNowait}}},
				{Name: "pwritev2", Conditions: seccomp.ArgumentConditions{{Argument: 5, Operation: seccomp.BitsSet, Value: rwfNowait}}},
				{Name: "madvise", Conditions: seccomp.ArgumentConditions{{Argument: 2, Operation: seccomp.Equal, Value: madvWillneed}}},
			}},
		},
	}
}

// program assembles the filter. The library's program lets every call of
// another architecture through; on x86_64 a process can still make 32-bit
// calls (int $0x80), with numbers of their own, so the program starts by
// refusing every call of the i386 ABI. No target's 64-bit code makes them.
func program(ptrace bool) ([]bpf.RawInstruction, error) {
	p := policy(ptrace)
	body, err := p.Assemble()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot assemble the system call filter")
	}
	var prefix []bpf.Instruction
	if runtime.GOARCH == "amd64" {
		prefix = []bpf.Instruction{
			bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
			bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(arch.I386.ID), SkipTrue: 1},
			bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.EPERM)},
		}
	}
	raw, err := bpf.Assemble(append(prefix, body...))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "jail: cannot assemble the system call filter")
	}
	return raw, nil
}

// filterBytes is the program as bwrap's --seccomp reads it: struct
// sock_filter after struct sock_filter, in the machine's byte order.
func filterBytes(ptrace bool) ([]byte, error) {
	raw, err := program(ptrace)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// filterName is the name under which hone's executable installs the filter
// and execs a command: a measuring tool that needs perf_event_open (Spec.Tool)
// runs outside the filter and starts the measured command through it.
const filterName = "hone-jail-filter"

// filterExec is the jail path of the filter installer.
const filterExec = meterDir + "/" + filterName

// filterMain installs the filter on every thread and execs argv[1:]
// ("ptrace" or "-" first, then the absolute path and its arguments).
func filterMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintf(os.Stderr, "%s: usage: %s ptrace|- PATH [ARG...]\n", filterName, filterName)
		return 2
	}
	if err := installFilter(args[0] == "ptrace"); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", filterName, err)
		return 126
	}
	err := syscall.Exec(args[1], args[1:], os.Environ())
	fmt.Fprintf(os.Stderr, "%s: %s: %v\n", filterName, args[1], err)
	return 127
}

// installFilter loads the filter into this process, all its threads at
// once (TSYNC): the thread that execs must have it.
func installFilter(ptrace bool) error {
	raw, err := program(ptrace)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set no_new_privs: %v", err)
	}
	insns := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		insns[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(insns)), Filter: &insns[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 {
		return fmt.Errorf("cannot install the system call filter: %v", e)
	}
	return nil
}

// withFilter is the command line a measuring tool runs: the filter
// installer, then the command under /bin/sh -c.
func withFilter(tool, command string, f Seccomp) string {
	if f.Off {
		return tool + " /bin/sh -c " + Quote(command)
	}
	mode := "-"
	if f.Ptrace {
		mode = "ptrace"
	}
	return tool + " " + filterExec + " " + mode + " /bin/sh -c " + Quote(command)
}
