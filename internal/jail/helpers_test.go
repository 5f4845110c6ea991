package jail

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/reexec"
)

// The test binary doubles as the attacker's toolbox: mounted into the jail
// at attackPath, it runs the attack named by its first argument. Each
// attack prints what it achieved, so a test can tell a refused attack from
// one that did not run.
const attackPath = "/attack/attack"

func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	if filepath.Base(os.Args[0]) == "attack" {
		os.Exit(attack(os.Args[1], os.Args[2:]))
	}
	if iso := os.Getenv("JAILTEST_METER_FROM"); iso != "" {
		// Plays a hone installed where the test put it: says what its
		// roles start from and how large the meter its jail ran is.
		os.Exit(meterFrom(iso))
	}
	if cmd := os.Getenv("JAILTEST_HONE_RUNS"); cmd != "" {
		// Plays a hone that is killed while its command runs.
		_, err := Run(context.Background(), Spec{Command: cmd, Isolation: os.Getenv("JAILTEST_ISOLATION")})
		fmt.Println(err)
		os.Exit(1)
	}
	code := m.Run()
	if helperDir != "" {
		os.RemoveAll(helperDir)
	}
	os.Exit(code)
}

func attack(name string, args []string) int {
	switch name {
	case "connect":
		c, err := net.DialTimeout(args[0], args[1], 2*time.Second)
		if err != nil {
			fmt.Println("refused:", err)
			return 1
		}
		fmt.Fprintln(c, "hello from the jail")
		c.Close()
		fmt.Println("connected")
		return 0
	case "forks":
		limit, _ := strconv.Atoi(args[0])
		n := 0
		for ; n < limit; n++ {
			if _, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "60"}, &syscall.ProcAttr{}); err != nil {
				fmt.Println("fork refused:", err)
				break
			}
		}
		fmt.Println("forked", n)
		return 0
	case "setns":
		entered := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			f, err := os.Open("/proc/" + e.Name() + "/ns/net")
			if err != nil {
				continue
			}
			if unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) == nil {
				entered++
			}
			f.Close()
		}
		fmt.Println("entered", entered)
		return 0
	case "meter":
		return attackMeter()
	case "probe":
		return probeCalls()
	case "tool":
		// A measuring tool: it probes outside the filter, then starts the
		// command it was given, as perf stat does.
		fmt.Println("tool:")
		probeCalls()
		fmt.Println("command:")
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Println(err)
			return 1
		}
		return 0
	case "spin":
		n, _ := strconv.Atoi(args[0])
		fmt.Println(spin(n))
		printOwnCPU()
		return 0
	case "helper":
		// Hands the work to a child and exits as soon as the answer is in,
		// leaving the child alive.
		cmd := exec.Command(attackPath, "spin-then-sleep", args[0])
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		r := bufio.NewReader(out)
		for range 2 {
			line, _ := r.ReadString('\n')
			fmt.Print(line)
		}
		return 0
	case "spin-then-sleep":
		n, _ := strconv.Atoi(args[0])
		fmt.Println(spin(n))
		printOwnCPU()
		time.Sleep(time.Hour)
		return 0
	case "autoreap":
		// With SIGCHLD ignored the kernel reaps children itself, and their
		// CPU time never reaches the parent's rusage.
		signal.Ignore(syscall.SIGCHLD)
		cmd := exec.Command(attackPath, "spin", args[0])
		cmd.Stdout = os.Stdout
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			return 1
		}
		_ = cmd.Wait()
		return 0
	}
	fmt.Println("unknown attack", name)
	return 2
}

// attackMeter tries every way at the meter (PID 1) through /proc: its
// environment, its memory, its open files (the report pipe among them), and
// ptrace.
func attackMeter() int {
	if _, err := os.ReadFile("/proc/1/environ"); err == nil {
		fmt.Println("read environ")
	}
	if f, err := os.Open("/proc/1/mem"); err == nil {
		fmt.Println("opened mem")
		f.Close()
	}
	if ents, err := os.ReadDir("/proc/1/fd"); err == nil {
		fmt.Println("listed fds:", len(ents))
	}
	for fd := 0; fd < 64; fd++ {
		f, err := os.OpenFile(fmt.Sprintf("/proc/1/fd/%d", fd), os.O_WRONLY, 0)
		if err != nil {
			continue
		}
		if _, err := f.WriteString(`{"exit_code":0,"wall_ns":1,"user_ns":1,"sys_ns":1}`); err == nil {
			fmt.Println("wrote to fd", fd)
		}
		f.Close()
	}
	if err := unix.PtraceSeize(1); err == nil {
		fmt.Println("ptraced")
	}
	fmt.Println("done")
	return 0
}

// printOwnCPU prints the CPU time the process has used so far
// ("cpu-ns: N"): the witness a test holds the meter's figure to.
func printOwnCPU() {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fmt.Println("cpu-ns: unknown:", err)
		return
	}
	fmt.Printf("cpu-ns: %d\n", ru.Utime.Nano()+ru.Stime.Nano())
}

// spin burns CPU in proportion to n.
func spin(n int) uint64 {
	x := uint64(1)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// attackMount mounts the test binary where the jailed command can run it.
func attackMount(t testing.TB) Mount {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Mount{Host: exe, Jail: attackPath, Mode: ReadOnly}
}

func writeFile(t testing.TB, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs hone to run as root")
	}
}
