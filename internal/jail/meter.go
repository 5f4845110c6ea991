package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/reexec"
)

// The names under which hone's own executable runs as the meter and as the
// root stager, registered with internal/reexec, so every binary that links
// this package and calls reexec.Init first (hone, test binaries) can play
// both parts.
const (
	meterName  = "hone-jail-init"
	stagerName = "hone-jail-stage"
)

func init() {
	reexec.Register(meterName, meterMain)
	reexec.Register(stagerName, func() int { return stagerMain(os.Args[1:]) })
}

// meterMain runs the plan and writes the report. It exits non-zero, without
// a report, only when it cannot even protect itself; hone then counts the
// run as failed.
func meterMain() int {
	// Not dumpable: the command runs as the same user in the same user
	// namespace, and could otherwise open /proc/1/fd/* (the report pipe),
	// read /proc/1/mem or environ, or ptrace the meter.
	if unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) != nil {
		return 1
	}
	// The kernel keeps SIGKILL and SIGSTOP from inside away from PID 1 but
	// delivers every signal it has a handler for, and Go installs handlers
	// that exit on SIGTERM or SIGINT.
	signal.Ignore(catchable...)
	b, err := json.Marshal(meter())
	if err != nil {
		return 1
	}
	if _, err := os.NewFile(reportFD, "report").Write(b); err != nil {
		return 1
	}
	return 0
}

// catchable is every signal the meter ignores: all the standard ones but
// SIGKILL and SIGSTOP (which cannot be caught), SIGCHLD (ignoring it would
// make the kernel reap children itself, and their CPU time would never reach
// RUSAGE_CHILDREN), and SIGURG and SIGPROF, which the Go runtime uses.
var catchable = []os.Signal{
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGILL, unix.SIGTRAP, unix.SIGABRT,
	unix.SIGBUS, unix.SIGFPE, unix.SIGUSR1, unix.SIGSEGV, unix.SIGUSR2, unix.SIGPIPE,
	unix.SIGALRM, unix.SIGTERM, unix.SIGSTKFLT, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU,
	unix.SIGXCPU, unix.SIGXFSZ, unix.SIGVTALRM, unix.SIGWINCH, unix.SIGIO, unix.SIGPWR, unix.SIGSYS,
}

func meter() report {
	var p plan
	in := os.NewFile(planFD, "plan")
	err := json.NewDecoder(io.LimitReader(in, 4<<20)).Decode(&p)
	in.Close()
	if err != nil {
		return report{Error: "cannot read the plan: " + err.Error()}
	}
	// Whatever fd reached the meter (the report pipe, anything bwrap left
	// open) must not reach the command.
	if err := closeOnExecAll(); err != nil {
		return report{Error: err.Error()}
	}
	pid1 := os.Getpid() == 1
	if !pid1 {
		// Weak isolation without a PID namespace: orphans come back to the
		// meter, so they are still killed, reaped and charged.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return report{Error: "cannot become a subreaper: " + err.Error()}
		}
	}
	for _, c := range p.Copies {
		if err := copyTree(c.From, c.To); err != nil {
			return report{Error: fmt.Sprintf("cannot copy %s: %v", c.To, err)}
		}
	}
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		return report{Error: fmt.Sprintf("working directory %s does not exist in the jail", p.Dir)}
	}
	if err := setRlimits(p.Rlimits); err != nil {
		return report{Error: err.Error()}
	}
	path := p.Argv[0]
	if p.Lookup {
		var code int
		if path, code = lookPath(path, p.Env); code != 0 {
			fmt.Fprintf(os.Stderr, "%s: %s: %s\n", meterName, p.Argv[0], map[int]string{126: "Permission denied", 127: "not found"}[code])
			return report{ExitCode: code}
		}
	}
	return measure(path, p, pid1)
}

// measure forks the command and waits for its main process; then it kills
// what is left, reaps everything, and reads the children's rusage.
func measure(path string, p plan, pid1 bool) report {
	attr := &syscall.ProcAttr{Dir: p.Dir, Env: p.Env, Files: []uintptr{0, 1, 2}}
	before, cgOK := sampleCPU(p.CPUStat)
	tasks := startTaskCount(pid1)
	start := time.Now()
	pid, err := forkOn(p.OneCPU, func() (int, error) {
		pid, err := syscall.ForkExec(path, p.Argv, attr)
		if errors.Is(err, syscall.ENOEXEC) {
			// A script without #!: the shell would run it itself.
			pid, err = syscall.ForkExec("/bin/sh", append([]string{"/bin/sh", path}, p.Argv[1:]...), attr)
		}
		return pid, err
	})
	var affinity *affinityError
	if errors.As(err, &affinity) {
		return report{Error: err.Error()}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", meterName, p.Argv[0], err)
		code := 126
		if errors.Is(err, syscall.ENOENT) {
			code = 127
		}
		return report{ExitCode: code}
	}
	var timedOut atomic.Bool
	if p.TimeoutNS > 0 {
		t := time.AfterFunc(time.Duration(p.TimeoutNS), func() {
			timedOut.Store(true)
			killAll(pid1)
		})
		defer t.Stop()
	}
	ws := waitFor(pid)
	wall := time.Since(start)
	left, born := leftovers(pid1)
	r := report{WallNS: int64(wall), Leftover: len(left), Lingering: lingering(left)}
	if born {
		// A process of the run forked after its command had exited, though
		// no listing caught one alive: something was left running.
		r.Leftover = max(r.Leftover, 1)
	}
	killAndReap(pid1)
	r.Tasks = tasks.done()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return report{Error: "getrusage: " + err.Error()}
	}
	r.UserNS, r.SysNS, r.MaxRSSKB = ru.Utime.Nano(), ru.Stime.Nano(), ru.Maxrss
	if after, ok := sampleCPU(p.CPUStat); ok && cgOK {
		r.Cgroup = true
		r.UnreapedUserNS, r.UnreapedSysNS = unreaped(before, after, r.UserNS, r.SysNS)
	}
	r.TimedOut = timedOut.Load()
	r.ExitCode, r.Signaled = ws.ExitStatus(), ws.Signaled()
	return r
}

// forkOn runs fork, on one CPU when one is set: a child inherits the
// affinity of the thread that forks it, so the meter's thread takes the
// last CPU it may use for the fork and gets its whole set back after.
func forkOn(one bool, fork func() (int, error)) (int, error) {
	if !one {
		return fork()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return 0, &affinityError{err}
	}
	var last unix.CPUSet
	for cpu := 8*int(unsafe.Sizeof(all)) - 1; cpu >= 0; cpu-- {
		if all.IsSet(cpu) {
			last.Set(cpu)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &last); err != nil {
		return 0, &affinityError{err}
	}
	defer func() { _ = unix.SchedSetaffinity(0, &all) }()
	return fork()
}

// affinityError is a CPU affinity the meter could not read or set.
type affinityError struct{ err error }

func (e *affinityError) Error() string {
	return "cannot start the command on one CPU: " + e.err.Error()
}

// taskCount counts the threads and processes a run creates. As PID 1 of
// its own PID namespace the meter sees every pid the namespace handed out:
// the last one (ns_last_pid) after the run, less the last one before it,
// less the threads the meter's own runtime started meanwhile, is how many
// tasks the command's tree created, however briefly they lived and
// whoever reaped them. Threads and processes draw from one counter, so
// they are counted together.
type taskCount struct{ lastPid, ownThreads int }

const nsLastPid = "/proc/sys/kernel/ns_last_pid"

func startTaskCount(pid1 bool) *taskCount {
	if !pid1 {
		return nil
	}
	last, ok := readCount(nsLastPid)
	if !ok {
		return nil
	}
	return &taskCount{lastPid: last, ownThreads: ownThreads()}
}

// done returns the count, or 0 when it is unknown.
func (c *taskCount) done() int {
	if c == nil {
		return 0
	}
	last, ok := readCount(nsLastPid)
	n := last - c.lastPid - (ownThreads() - c.ownThreads)
	if !ok || n <= 0 {
		return 0
	}
	return n
}

func readCount(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var n int64
	return int(n), scanInt(strings.TrimSpace(string(b)), &n)
}

// ownThreads counts the meter's threads; the Go runtime never ends one.
func ownThreads() int {
	ents, _ := os.ReadDir("/proc/self/task")
	return len(ents)
}

// cpuSample is the cgroup's count and the meter's own CPU time at one
// moment.
type cpuSample struct{ cgUser, cgSys, selfUser, selfSys int64 }

func sampleCPU(cpuStat string) (cpuSample, bool) {
	var s cpuSample
	if cpuStat == "" {
		return s, false
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return s, false
	}
	s.selfUser, s.selfSys = ru.Utime.Nano(), ru.Stime.Nano()
	b, err := os.ReadFile(cpuStat)
	if err != nil {
		return s, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		var v int64
		if k, n, ok := strings.Cut(line, " "); ok && scanInt(n, &v) {
			switch k {
			case "user_usec":
				s.cgUser = v * 1000
			case "system_usec":
				s.cgSys = v * 1000
			}
		}
	}
	return s, true
}

// unreaped is the CPU time the cgroup counted between two samples beyond
// the meter's own and the reaped children's: processes the kernel reaped
// itself (their parent ignored SIGCHLD), and the last moments of exiting
// threads. bwrap's outer process, also in the cgroup, sleeps meanwhile.
func unreaped(before, after cpuSample, childUser, childSys int64) (user, sys int64) {
	cgUser, cgSys := after.cgUser-before.cgUser, after.cgSys-before.cgSys
	selfUser, selfSys := after.selfUser-before.selfUser, after.selfSys-before.selfSys
	extra := cgUser + cgSys - selfUser - selfSys - childUser - childSys
	if extra <= 0 {
		return 0, 0
	}
	user = min(max(cgUser-selfUser-childUser, 0), extra)
	return user, extra - user
}

// waitFor reaps children until pid is among them. Orphans reaped on the way
// are charged like the rest.
func waitFor(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, unix.WALL, nil)
		if got == pid {
			return ws
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return ws
		}
	}
}

// killAndReap kills every process left and reaps until none remains, so
// RUSAGE_CHILDREN holds the whole tree. Killing again on each round catches
// a process forked while the last kill was under way.
func killAndReap(pid1 bool) {
	for {
		killAll(pid1)
		_, err := syscall.Wait4(-1, nil, unix.WALL, nil)
		if errors.Is(err, syscall.ECHILD) {
			return
		}
	}
}

// killAll kills every process of the run. As PID 1, kill(-1) reaches every
// process of the namespace but the meter; without a PID namespace that
// would be every process of the user on the host, so the meter's
// descendants are found one by one instead.
func killAll(pid1 bool) {
	if pid1 {
		_ = unix.Kill(-1, unix.SIGKILL)
		return
	}
	live, dead := tree()
	for _, pid := range append(live, dead...) {
		_ = unix.Kill(pid, unix.SIGKILL)
	}
}

// maxScans bounds how many times leftovers lists /proc.
const maxScans = 64

// leftovers lists the run's processes still alive once its command has
// exited, and reports whether one was seen being born though none could be
// listed.
//
// One listing of /proc is not enough: a process that is listed, then forks
// and exits before its stat is read, is skipped as gone, and the child it
// forked came too late for the listing. The double-fork daemon does just
// that, and one listing missed it a few runs in a hundred. So the meter
// lists until two listings in a row find the same processes alive and, as
// PID 1 of its own namespace, no pid was handed out (ns_last_pid stood
// still) from the start of the first to the end of the second. A process
// alive after them yet in neither can then only be a child whose pid was
// handed out before the first and whose fork was still under way during
// the second's listing; its parent, inside that fork all the while, was
// listed alive by both. So a run that leaves anything running is always
// seen to, though such a child goes uncounted. The meter's own new threads
// draw pids too, so a moved counter only means another listing; but pids
// beyond the meter's new threads went to the run's processes, which after
// its command's exit are leftovers even if no listing caught one alive (a
// run that forks through every listing).
//
// First the meter stops every process of the namespace with one kill(-1,
// SIGSTOP): a signal to many processes reaches a child whose fork is under
// way too, so none slips past it, and a stopped parent can neither fork
// again nor exit from under its name (an exiting process has no command
// line left). The listings do not rely on it, as the run could undo it with
// a SIGCONT it arranged (a timer, a parent-death signal); nothing in the
// run can move ns_last_pid back (in the bwrap jail it has no capability to
// set it). Freezing the run's cgroup would not serve: the meter is in that
// cgroup, and the run, under the meter's uid, could thaw it.
//
// Without a PID namespace (the weakest isolation levels) the counter is the
// host's, which never stands still on a busy machine, and kill(-1) would
// reach the user's every process. There the meter stops each process a
// listing finds (a fork under way completes, and the next listing finds its
// child), which with two agreeing listings catches the double fork, but not
// a run that undoes its stops and keeps forking through every listing. As
// with killAll there, a listed pid could in principle be reused by then.
func leftovers(pid1 bool) (live []int, born bool) {
	settle()
	if pid1 {
		_ = unix.Kill(-1, unix.SIGSTOP)
	}
	var prev []int
	prevStart, havePrev := 0, false
	for i := 0; i < maxScans; i++ {
		threads := ownThreads()
		start, counted := 0, false
		if pid1 {
			start, counted = readCount(nsLastPid)
		}
		l, _ := tree()
		if !pid1 {
			for _, pid := range l {
				_ = unix.Kill(pid, unix.SIGSTOP)
			}
		}
		still := true
		if counted {
			now, ok := readCount(nsLastPid)
			still = ok && now == prevStart
			// Threads the meter started between the two counts are at most
			// those it started between its two thread counts, so the rest
			// are the run's.
			born = born || ok && now-start > ownThreads()-threads
		}
		if havePrev && still && slices.Equal(l, prev) {
			return l, born
		}
		prev, prevStart, havePrev = l, start, true
	}
	return prev, born
}

// exitGrace is how long a process on its way out (every thread exiting,
// its memory released) gets to finish once the command has exited: a
// helper that ends when its parent does (Go's build cache program when go
// test exits) is often still exiting then, and the listing counted it,
// which made an honest Go gate's verdict an error. Nothing else waits:
// a process that is not exiting is stopped and listed at once.
const exitGrace = 500 * time.Millisecond

// settle waits up to exitGrace while any of the meter's descendants is on
// its way out (commandName is empty for those alone).
func settle() {
	for deadline := time.Now().Add(exitGrace); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if l, _ := tree(); !slices.ContainsFunc(l, func(pid int) bool { return commandName(pid) == "" }) {
			return
		}
	}
}

// tree lists the meter's descendants, alive and dead (zombies), each in
// order. /proc/self names the meter in whatever procfs is mounted, so this
// works inside the jail's own /proc and on the host's.
func tree() (live, dead []int) {
	self, err := os.Readlink("/proc/self")
	if err != nil {
		return nil, nil
	}
	ents, _ := os.ReadDir("/proc")
	parent := map[string]string{}
	alive := map[string]bool{}
	for _, e := range ents {
		f := statFields("/proc/" + e.Name() + "/stat")
		if len(f) < 2 {
			continue
		}
		parent[e.Name()] = f[1]
		// A process whose main thread has exited shows as a zombie while
		// its other threads run on.
		alive[e.Name()] = f[0] != "Z" || len(liveTasks(e.Name())) > 0
	}
	for pid := range parent {
		for p := parent[pid]; p != "" && p != "0"; p = parent[p] {
			if p == self {
				n, _ := strconv.Atoi(pid)
				if alive[pid] {
					live = append(live, n)
				} else {
					dead = append(dead, n)
				}
				break
			}
		}
	}
	slices.Sort(live)
	slices.Sort(dead)
	return live, dead
}

// lingering names the first MaxLingering of pids, read before they are
// killed: each one's command line and how long it has run.
func lingering(pids []int) []Lingering {
	slices.Sort(pids)
	up, _ := os.ReadFile("/proc/uptime")
	var uptime float64
	fmt.Sscan(string(up), &uptime)
	var out []Lingering
	for _, pid := range pids[:min(len(pids), MaxLingering)] {
		l := Lingering{PID: pid, Command: commandName(pid)}
		// Field 22, starttime, in clock ticks since boot (USER_HZ, 100 on
		// Linux).
		if f := statFields(fmt.Sprintf("/proc/%d/stat", pid)); len(f) > 19 {
			var ticks float64
			fmt.Sscan(f[19], &ticks)
			l.Seconds = max(uptime-ticks/100, 0)
		}
		out = append(out, l)
	}
	return out
}

// commandName is pid's command line, or, when it has none, its comm in
// brackets, as ps shows it. A process inside its exec, or one that blanked
// its arguments to hide, has none; nor has a main thread that exited while
// other threads run on, whose command line is read through one of those.
// Only a process on its way out (every thread exiting, its memory
// released) stays unnamed, as Lingering.Command promises its readers.
func commandName(pid int) string {
	dir := fmt.Sprintf("/proc/%d", pid)
	if s := cmdline(dir); s != "" {
		return s
	}
	tasks := liveTasks(strconv.Itoa(pid))
	for _, t := range tasks {
		if s := cmdline(dir + "/task/" + t); s != "" {
			return s
		}
	}
	exiting := true
	for _, t := range tasks {
		// Field 9, the task's flags; PF_EXITING is 0x4.
		var flags int64
		f := statFields(dir + "/task/" + t + "/stat")
		exiting = exiting && len(f) > 6 && scanInt(f[6], &flags) && flags&0x4 != 0
	}
	if exiting {
		return ""
	}
	b, err := os.ReadFile(dir + "/comm")
	if err != nil {
		return ""
	}
	return "[" + strings.TrimSpace(string(b)) + "]"
}

// cmdline reads the command line of the process or task at dir, NULs as
// spaces, cut to 200 bytes.
func cmdline(dir string) string {
	b, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b[:min(len(b), 200)]), "\x00", " "))
}

// liveTasks lists the threads of process pid that are neither zombies nor
// dead.
func liveTasks(pid string) []string {
	ents, _ := os.ReadDir("/proc/" + pid + "/task")
	var out []string
	for _, e := range ents {
		if f := statFields("/proc/" + pid + "/task/" + e.Name() + "/stat"); len(f) > 0 && f[0] != "Z" && f[0] != "X" {
			out = append(out, e.Name())
		}
	}
	return out
}

// statFields reads a stat file's fields from the third, the state, on:
// "pid (comm) state ppid ...", where comm may hold anything, so it is cut
// at its last closing parenthesis.
func statFields(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
}

func closeOnExecAll() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("cannot list open files: %v", err)
	}
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// setRlimits sets each limit as both soft and hard limit, so the command
// cannot raise it again; a value above the meter's own hard limit is lowered
// to that.
func setRlimits(l rlimits) error {
	for _, r := range []struct {
		name     string
		resource int
		v        int64
	}{
		{"cpu", unix.RLIMIT_CPU, l.CPU}, {"file size", unix.RLIMIT_FSIZE, l.FSize},
		{"data", unix.RLIMIT_DATA, l.Data}, {"processes", unix.RLIMIT_NPROC, l.NProc},
		{"open files", unix.RLIMIT_NOFILE, l.NoFile},
	} {
		if r.v == 0 {
			continue
		}
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(r.resource, &cur); err != nil {
			return fmt.Errorf("cannot read the %s limit: %v", r.name, err)
		}
		v := uint64(unix.RLIM_INFINITY)
		if r.v > 0 {
			v = uint64(r.v)
		}
		v = min(v, cur.Max)
		// syscall.Setrlimit, not unix's: the Go runtime must learn of a new
		// RLIMIT_NOFILE, or it restores its startup value in the child.
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("cannot set the %s limit: %v", r.name, err)
		}
	}
	return nil
}

// lookPath finds name in env's PATH as the shell would, or returns the
// shell's exit status for a command it cannot run (127 not found, 126 not
// executable).
func lookPath(name string, env []string) (string, int) {
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	code := 127
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if unix.Access(p, unix.X_OK) == nil {
			return p, 0
		}
		code = 126
	}
	return "", code
}

func scanInt(s string, v *int64) bool {
	_, err := fmt.Sscan(s, v)
	return err == nil
}
