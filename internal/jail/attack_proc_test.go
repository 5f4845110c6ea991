package jail

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/internal/tier"
)

// Each test here performs an attack a candidate's code could make on the
// network, the meter, the process limits or the measurement from inside a
// build, gate or bench run, then checks that it failed and that nothing is
// left behind.

func TestCandidateCannotConnectToHostUnixSocket(t *testing.T) {
	tier.Jail(t)
	hidden := t.TempDir()
	shared := t.TempDir()
	var got []string
	for _, dir := range []string{hidden, shared} {
		l, err := net.Listen("unix", filepath.Join(dir, "sock"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				line, _ := bufio.NewReader(c).ReadString('\n')
				got = append(got, line)
				c.Close()
			}
		}()
	}
	spec := Spec{Mounts: []Mount{attackMount(t), {Host: shared, Jail: "/shared", Mode: ReadOnly}}}
	spec.Command = attackPath + " connect unix " + filepath.Join(hidden, "sock")
	if res := run(t, spec); res.Success() {
		t.Errorf("connected to a socket in an unmounted host directory: %s", res.Stdout.Bytes())
	}
	if os.Geteuid() == 0 {
		// A socket the jail can see, owned by root: only the jail user's
		// own rights stand between it and the socket.
		spec.Command = attackPath + " connect unix /shared/sock"
		if res := run(t, spec); res.Success() || !strings.Contains(string(res.Stdout.Bytes()), "permission denied") {
			t.Errorf("connected to a root-owned socket: %s", res.Stdout.Bytes())
		}
	}
	time.Sleep(100 * time.Millisecond)
	if len(got) > 0 {
		t.Errorf("host sockets received %q", got)
	}
}

func TestCandidateCannotReachHostLoopback(t *testing.T) {
	tier.Jail(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	res := run(t, Spec{Command: attackPath + " connect tcp " + l.Addr().String(), Mounts: []Mount{attackMount(t)}})
	if res.Success() || !res.NetworkDenied {
		t.Errorf("reached the host's loopback: %s", res.Stdout.Bytes())
	}
	select {
	case <-accepted:
		t.Error("the host listener accepted a connection from the jail")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestCandidateCannotEnterAnotherNamespace(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{
		Command: attackPath + " setns; unshare -Ur true && echo new user namespace; unshare -n true && echo new network namespace; nsenter -t 1 -n true && echo entered",
		Mounts:  []Mount{attackMount(t)},
	})
	out := string(res.Stdout.Bytes())
	if !strings.Contains(out, "entered 0") || strings.Contains(out, "namespace") || strings.Contains(out, "entered\n") {
		t.Errorf("a namespace escape worked:\n%s%s", out, res.Stderr.Bytes())
	}
}

func TestCandidateCannotSeeHostProcesses(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "ls /proc"})
	for _, f := range strings.Fields(string(res.Stdout.Bytes())) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 10 {
			t.Errorf("pid %d visible in the jail's /proc", pid)
		}
	}
	if strings.Contains(string(res.Stdout.Bytes()), strconv.Itoa(os.Getpid())+"\n") {
		t.Error("hone's own pid is visible")
	}
}

func TestCandidateCannotReadOrForgeTheMeter(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: attackPath + " meter", Mounts: []Mount{attackMount(t)}})
	if out := string(res.Stdout.Bytes()); out != "done\n" {
		t.Errorf("the meter was reachable through /proc/1:\n%s", out)
	}
	if res.Wall < time.Microsecond || res.CPU() < time.Microsecond {
		t.Errorf("the report looks forged: wall %v, cpu %v", res.Wall, res.CPU())
	}
}

func TestCandidateCannotKillOrStopTheMeter(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "for s in TERM INT HUP QUIT USR1 USR2 ABRT SEGV BUS PIPE ALRM XCPU STOP KILL; do kill -$s 1; done; echo survived"})
	if !res.Success() || string(res.Stdout.Bytes()) != "survived\n" {
		t.Errorf("%s: %s %s", res.Describe(), res.Stdout.Bytes(), res.Stderr.Bytes())
	}
}

func TestCandidateCannotInheritHoneDescriptors(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "ls /proc/self/fd", Stdin: strings.NewReader("")})
	if got := strings.Fields(string(res.Stdout.Bytes())); strings.Join(got, " ") != "0 1 2 3" {
		t.Errorf("open descriptors in the jail: %v (want 0 1 2 and ls's own)", got)
	}
}

func TestCandidateCannotForkPastTheProcessLimit(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: attackPath + " forks 200", Mounts: []Mount{attackMount(t)}, Limits: Limits{Procs: 40}})
	out := string(res.Stdout.Bytes())
	n, _ := strconv.Atoi(strings.TrimSpace(out[strings.LastIndex(out, "forked ")+len("forked "):]))
	if !strings.Contains(out, "fork refused") || n >= 40 {
		t.Errorf("forked %d processes under a limit of 40:\n%s", n, out)
	}
	if res.Leftover != n {
		t.Errorf("leftover %d, want the %d sleepers", res.Leftover, n)
	}
}

func TestForkBombIsContainedAndGone(t *testing.T) {
	tier.Jail(t)
	marker := "hone-bomb-" + strconv.Itoa(os.Getpid())
	start := time.Now()
	res := run(t, Spec{Command: "b() { sleep 30 # " + marker + "\n b & b & }; b", Limits: Limits{Procs: 64}, Timeout: 3 * time.Second})
	if time.Since(start) > 30*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if n := testproc.Count(t, marker); n != 0 {
		t.Errorf("%d processes of the bomb alive after Run returned (%s)", n, res.Describe())
	}
}

func TestCandidateCannotLeaveADaemonRunning(t *testing.T) {
	tier.Jail(t)
	marker := "hone-daemon-" + strconv.Itoa(os.Getpid())
	cmd := "setsid sh -c 'sleep 1000 # " + marker + "' & (sh -c 'sleep 1000 # " + marker + "' &) ; nohup sh -c 'sleep 1000 # " + marker + "' >/dev/null 2>&1 & sleep 0.2"
	res := run(t, Spec{Command: cmd})
	if !res.Success() || res.Leftover < 3 {
		t.Errorf("%s, leftover %d, want at least 3", res.Describe(), res.Leftover)
	}
	if n := testproc.Count(t, marker); n != 0 {
		t.Errorf("%d daemons alive after Run returned", n)
	}
}

// hone killed while a command runs (SIGKILL: no cleanup of its own) must
// leave nothing running: bwrap and the weak meter die with their parent,
// and the PID namespace with its first process.
func TestKilledHoneLeavesNothingRunning(t *testing.T) {
	for _, iso := range []string{"full", "weak"} {
		t.Run(iso, func(t *testing.T) {
			marker := "hone-orphan-" + iso + "-" + strconv.Itoa(os.Getpid())
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			hone := exec.Command(exe)
			hone.Env = append(os.Environ(), "JAILTEST_ISOLATION="+iso,
				"JAILTEST_HONE_RUNS=setsid sh -c 'sleep 1000 # "+marker+"' & sleep 1000 # "+marker)
			if err := hone.Start(); err != nil {
				t.Fatal(err)
			}
			// Started means both shells seen on three polls in a row: a
			// process between fork and exec shows its parent's command
			// line, and one in exec shows none, each for an instant, so
			// a single sighting can be a fork about to vanish.
			deadline := time.Now().Add(20 * time.Second)
			seen := 0
			for ; seen < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if testproc.Count(t, marker) >= 2 {
					seen++
				} else {
					seen = 0
				}
			}
			if seen < 3 {
				hone.Process.Kill()
				t.Fatal("the command never started")
			}
			hone.Process.Kill()
			hone.Wait()
			for testproc.Count(t, marker) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := testproc.Count(t, marker); n != 0 {
				t.Errorf("%d processes outlived the killed hone", n)
			}
			if iso == "weak" {
				// The next hone's first weak run sweeps the dead one's scratch.
				sweepScratch()
				if left, _ := filepath.Glob(filepath.Join(os.TempDir(), scratchPrefix+strconv.Itoa(hone.Process.Pid)+"-*")); len(left) > 0 {
					t.Errorf("the killed hone's scratch is still there: %v", left)
				}
			}
		})
	}
}

// Work handed to a helper that is still alive when the main process exits
// is charged: the run costs as much CPU as doing the work inline.
func TestCandidateCannotHideWorkInAHelperThatOutlivesIt(t *testing.T) {
	tier.Jail(t)
	helper := hideWork(t, "helper")
	if helper.Leftover != 1 {
		t.Errorf("leftover %d, want the helper", helper.Leftover)
	}
	// Killed and reaped by the meter, the helper is charged as a child, not
	// found later in the cgroup.
	if helper.Unreaped > helper.CPU()/10 {
		t.Errorf("the helper's work was not reaped: %v of %v found only in the cgroup", helper.Unreaped, helper.CPU())
	}
}

func TestCandidateCannotHideWorkInAChildTheKernelReaps(t *testing.T) {
	tier.Jail(t)
	hideWork(t, "autoreap")
}

// hideWork runs the work through the given attack and fails unless the
// run is charged at least the CPU time the worker itself counted when the
// work was done. Kernel CPU counters only grow, so load cannot fail this;
// the slack covers the counters' units (the cgroup counts microseconds).
func hideWork(t *testing.T, how string) *Result {
	const n = "100000000"
	spec := Spec{Mounts: []Mount{attackMount(t)}}
	spec.Command = attackPath + " spin " + n
	inline := run(t, spec)
	spec.Command = attackPath + " " + how + " " + n
	hidden := run(t, spec)
	answer, _ := workerReport(t, inline)
	got, worked := workerReport(t, hidden)
	if got != answer {
		t.Fatalf("%s did not do the work: %q vs %q", how, got, answer)
	}
	t.Logf("%s: the worker counted %v of CPU; the meter charged the run %v", how, worked, hidden.CPU())
	if hidden.CPU() < worked-time.Millisecond {
		if !hidden.Cgroup && how == "autoreap" {
			t.Skip("no cgroup v2 this user may create: the CPU time of children the kernel reaps goes uncounted, and Result.Cgroup says so")
		}
		t.Errorf("%s run charged %v, less than the %v its worker counted: the hidden work went unmeasured", how, hidden.CPU(), worked)
	}
	return hidden
}

// workerReport reads the spinning worker's answer and its own CPU count
// from a run's output.
func workerReport(t *testing.T, res *Result) (answer string, cpu time.Duration) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(res.Stdout.Bytes())), "\n")
	if len(lines) != 2 {
		t.Fatalf("the worker printed %q, want its answer and its CPU time", res.Stdout.Bytes())
	}
	v, ok := strings.CutPrefix(lines[1], "cpu-ns: ")
	ns, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || ns <= 0 {
		t.Fatalf("the worker's CPU report %q", lines[1])
	}
	return lines[0], time.Duration(ns)
}
