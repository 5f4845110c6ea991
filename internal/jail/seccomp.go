package jail

import (
	"encoding/binary"
	"runtime"

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
// A run with a measuring tool (Spec.Tool) has perf_event_open as well:
// perf opens its counters in the jail, before it starts the command.
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
	"userfaultfd",
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
func policy(f Seccomp, tool bool) seccomp.Policy {
	names := append([]string{}, deniedCalls...)
	if !f.Ptrace {
		names = append(names, "ptrace")
	}
	if !tool {
		names = append(names, "perf_event_open")
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
func program(f Seccomp, tool bool) ([]bpf.RawInstruction, error) {
	p := policy(f, tool)
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
func filterBytes(f Seccomp, tool bool) ([]byte, error) {
	raw, err := program(f, tool)
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
