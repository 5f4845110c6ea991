// Package jail runs one command on behalf of a patch (a build, a gate, a
// bench run, a profile workload) in a jail built with bubblewrap, measured by
// hone's own meter running as the jail's PID 1:
//
//	hone ──exec──> bwrap (as the jail user when hone is root) ──> meter (PID 1)
//	                                                             └─ fork+exec the command
//
// The jail sees an allowlisted view of the system (never the host's root),
// fresh size-limited scratch areas, only the directories the Spec mounts,
// no network unless allowed, and no capabilities. When hone is root, bwrap
// runs as an unprivileged jail user (see Spec.User), started through a
// stager that binds hone's directories first (stagerMain), so the jail
// never maps back to root; the jail user must be able to read what is
// mounted, as it can a checkout made with the usual umask.
//
// The meter is hone's own executable re-executed under the name
// hone-jail-init (see the init function), so every binary that links this
// package can serve as the meter. It measures only the command's process
// tree, including processes still alive when the main process exits, which
// it kills and reaps, and, where hone may create a cgroup, processes the
// kernel reaped itself (Result.Cgroup, Result.Unreaped).
//
// Weak isolation (Spec.Isolation "weak", opt-in) runs the same meter without
// bwrap, under whatever namespaces the kernel grants; Result.Isolation says
// what was obtained.
package jail

import (
	"fmt"
	"io"
	"time"
)

// Mode is how a host directory appears in the jail.
type Mode int

const (
	// ReadOnly binds the host directory read-only.
	ReadOnly Mode = iota
	// ReadWrite binds it writable: what the command writes is on the host.
	// When hone is root the tree is handed to the jail user first, since
	// the jail user must be able to write there.
	ReadWrite
	// Copy gives the command a private writable copy on a fresh tmpfs, made
	// by the meter before the command starts and thrown away after it: every
	// run starts from the same tree and nothing reaches the host.
	Copy
)

func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case Copy:
		return "copy"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Mount makes the host directory Host visible at the jail path Jail.
type Mount struct {
	Host, Jail string
	Mode       Mode
}

// Spec describes one command.
type Spec struct {
	// Command is shell text. A plain sequence of words is exec'd directly
	// (PATH looked up in the jail); anything else runs under /bin/sh -c.
	Command string
	// Dir is the working directory, a jail path; empty means HOME.
	Dir string
	// Env holds KEY=VALUE pairs added to the base environment (Environment);
	// a key already there is replaced in place.
	Env []string
	// Path lists jail directories put before the system PATH.
	Path   []string
	Mounts []Mount
	// ReadOnly lists extra host paths (toolchains) bound read-only at the
	// same path.
	ReadOnly []string
	// Stdin is copied to the command through a pipe; nil means empty.
	Stdin io.Reader
	// Timeout bounds the command from its start; 0 means only ctx.
	Timeout time.Duration
	// Network is "deny" (the default when empty) or "allow".
	Network string
	// Isolation is "full" (the default when empty) or "weak".
	Isolation string
	// User is the host account the jail runs as when hone is root: a name
	// or a numeric uid; a name that does not exist is created (useradd
	// --system) on first use. Empty means DefaultUser.
	// Ignored when hone is not root: the jail then runs as hone's own user.
	User   string
	Limits Limits
	// Seccomp chooses the system call filter (see seccomp.go); the full
	// jail only: weak isolation has none.
	Seccomp Seccomp
	// Tool is the shell text of a measuring tool that starts the command
	// itself under /bin/sh -c ("perf stat -x, -o FILE --"). Its run's
	// filter lets perf_event_open through, which perf needs and the
	// command it starts then has too; all else is as without a tool.
	Tool string
	// OutputCap bounds how many bytes of stdout and of stderr are kept (each);
	// the rest is still hashed and counted. 0 means DefaultOutputCap.
	OutputCap int
	// OneCPU starts the command on one CPU, the last the meter may use: a
	// runtime that works on idle CPUs (Go's garbage collector marks on
	// every idle core) otherwise spends CPU time that grows with how idle
	// the machine is, tens of milliseconds per run that no patch caused.
	// The command may widen its own affinity; that only adds to its CPU
	// time.
	OneCPU bool
}

// NoLimit, in any Limits field, means no limit at all (for Data: room for
// sanitizer builds, which reserve terabytes of address space).
const NoLimit = -1

// Limits bound the command's whole process tree. A zero field takes its
// default; NoLimit lifts it.
type Limits struct {
	CPU      time.Duration // RLIMIT_CPU of each process (default 1h)
	FileSize int64         // RLIMIT_FSIZE in bytes (default 4 GiB)
	// Data is RLIMIT_DATA in bytes (default 16 GiB). RLIMIT_AS is not used:
	// Go and some compilers reserve address ranges they never touch.
	Data int64
	// Procs is RLIMIT_NPROC (default 512): processes and threads of the jail
	// user in this jail's user namespace, the meter's few threads included.
	Procs int64
	// Scratch is the size of each fresh tmpfs: /tmp, /var/tmp, HOME and
	// each Copy mount (default 1 GiB).
	Scratch int64
	// Shm is the size of /dev/shm (default 64 MiB).
	Shm int64
}

// DefaultOutputCap is how much of each output stream a Result keeps by default.
const DefaultOutputCap = 1 << 20

// Result is what one command did.
type Result struct {
	ExitCode int  // -1 when killed by a signal
	Signaled bool // ended by a signal (including the kill on timeout)
	TimedOut bool // killed because Spec.Timeout elapsed
	Stdout   Output
	Stderr   Output
	// UserTime and SysTime are the CPU time of the command's whole process
	// tree, from the meter: every process it started, including those killed
	// when the main process exited; never bwrap's or the meter's own. With
	// Cgroup they include Unreaped.
	UserTime, SysTime time.Duration
	// Cgroup reports that the run had a cgroup of its own, through which
	// Unreaped was found. Without one (no writable cgroup v2 here), the CPU
	// time of processes the kernel reaped itself is not counted.
	Cgroup bool
	// Unreaped is CPU time spent by processes that nothing waited for: the
	// kernel reaped them because their parent ignored SIGCHLD. Honest
	// programs rarely do this; a candidate hiding work would.
	Unreaped time.Duration
	// Wall runs from the command's fork to its main process's exit.
	Wall time.Duration
	// JailWall is hone's view: from starting the jail to its end. The jail's
	// overhead is JailWall - Wall.
	JailWall time.Duration
	MaxRSS   int64 // bytes, the largest single process
	// Leftover counts the processes still alive when the main process
	// exited; they were killed.
	Leftover int
	// Lingering names the first few of them (MaxLingering), so that a
	// verdict can say whose they were.
	Lingering []Lingering
	// Tasks counts the threads and processes the command's tree created,
	// its main process included, however briefly they lived; 0 when it is
	// unknown (weak isolation without a PID namespace of its own).
	Tasks int
	// Shell reports that the command ran under /bin/sh -c rather than being
	// exec'd directly.
	Shell bool
	// MeterFailed means the meter's report was missing or malformed (it
	// crashed, was killed, or could not prepare the run): nothing above was
	// measured and the run counts as failed. MeterError says why.
	MeterFailed bool
	MeterError  string
	// Isolation is "full" for the jail, or the weak level obtained
	// ("userns+pidns+netns", ..., "process-group").
	Isolation     string
	NetworkDenied bool
	// HostUID is the host uid the command ran as.
	HostUID int
	// Seccomp is the version of the system call filter the command ran
	// under (FilterVersion), or "" when it had none.
	Seccomp string
	// UserCreated reports that this process created the jail user (with
	// useradd) just before this run, so the caller can tell the user once.
	UserCreated bool
}

// CPU is user plus system time.
func (r *Result) CPU() time.Duration { return r.UserTime + r.SysTime }

// Success reports a zero exit status from a run that was measured.
func (r *Result) Success() bool { return r.ExitCode == 0 && !r.Signaled && !r.MeterFailed }

// Describe says in a few words how the command ended.
func (r *Result) Describe() string {
	switch {
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s and was killed", r.Wall.Round(time.Millisecond))
	case r.MeterFailed:
		return "not measured: " + r.MeterError
	case r.Signaled:
		return "killed by a signal"
	default:
		return fmt.Sprintf("exit status %d", r.ExitCode)
	}
}

// MaxLingering bounds Result.Lingering.
const MaxLingering = 5

// Lingering is a process still alive when a run's main process exited.
type Lingering struct {
	PID int `json:"pid"`
	// Command is its command line as the process shows it (a process may
	// rename itself: it names, it does not prove), cut to 200 bytes; for
	// one that shows none (inside its exec, or blanked), its comm in
	// brackets, as ps shows it. It is empty only for a process on its way
	// out, its memory already released.
	Command string `json:"command"`
	// Seconds is how long it had been running.
	Seconds float64 `json:"seconds"`
}
