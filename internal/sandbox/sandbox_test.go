package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testproc"
)

func TestRunCapturesExitAndOutput(t *testing.T) {
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "echo out; echo err >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Success() {
		t.Errorf("exit = %d, want 3", res.ExitCode)
	}
	if got := string(res.Stdout.Bytes()); got != "out\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(res.Stderr.Tail(100)); got != "err\n" {
		t.Errorf("stderr tail = %q", got)
	}
	if res.Isolation == "" {
		t.Error("no isolation recorded")
	}
}

func TestRunScrubsEnvironment(t *testing.T) {
	t.Setenv("HONE_SECRET_TOKEN", "x")
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "env", Env: []string{"HONE_OUT=/o"}})
	if err != nil {
		t.Fatal(err)
	}
	env := string(res.Stdout.Bytes())
	for _, want := range []string{"HONE_OUT=/o", "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=readonly"} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "HONE_SECRET_TOKEN") {
		t.Error("hone's own environment leaked into the sandbox")
	}
	home, _ := os.UserHomeDir()
	if strings.Contains(env, "HOME="+home+"\n") {
		t.Error("HOME is the user's real home")
	}
}

func TestRunMeasuresCPUTime(t *testing.T) {
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"})
	if err != nil {
		t.Fatal(err)
	}
	if res.CPU() < 10*time.Millisecond || res.CPU() > res.Wall+10*time.Millisecond {
		t.Errorf("cpu = %v, wall = %v", res.CPU(), res.Wall)
	}
}

// A command that hangs, with a grandchild that left the process group with
// setsid, is killed at its timeout and the grandchild is gone too.
func TestTimeoutKillsWholeTree(t *testing.T) {
	if !pidNamespace() {
		t.Skip("no PID namespace here: process-group isolation cannot reach setsid grandchildren")
	}
	marker := "hone-grandchild-" + strconv.Itoa(os.Getpid())
	cmd := `setsid sh -c 'while :; do sleep 1; done # ` + marker + `' & sleep 1000`
	start := time.Now()
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: cmd, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Success() {
		t.Fatalf("want a timeout, got %s", res.Describe())
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v to kill", time.Since(start))
	}
	if n := testproc.Count(t, marker); n != 0 {
		t.Errorf("%d processes of the tree still alive after the timeout", n)
	}
}

func TestNetworkDenied(t *testing.T) {
	if !pidNamespace() {
		t.Skip("no network namespace on this kernel")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	// A loopback-only namespace has no route to 1.1.1.1.
	cmd := `python3 -c 'import socket; socket.create_connection(("1.1.1.1", 53), timeout=2)'`
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success() || !res.NetworkDenied {
		t.Errorf("connection inside the sandbox: %s, network denied %v", res.Describe(), res.NetworkDenied)
	}
	if !strings.Contains(string(res.Stderr.Bytes()), "unreachable") {
		t.Errorf("stderr = %s", res.Stderr.Bytes())
	}
}

func TestCancelKillsAndErrs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Spec{Dir: t.TempDir(), Command: "sleep 100"})
	if err == nil {
		t.Fatal("cancelled run returned no error")
	}
}

func TestOutputCapKeepsHashOfAll(t *testing.T) {
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "seq 1 100000", OutputCap: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stdout.Truncated() || len(res.Stdout.Bytes()) != 100 || res.Stdout.Len() < 500000 {
		t.Errorf("cap not applied: kept %d of %d", len(res.Stdout.Bytes()), res.Stdout.Len())
	}
	if !strings.HasSuffix(string(res.Stdout.Tail(7)), "100000\n") {
		t.Errorf("tail = %q", res.Stdout.Tail(7))
	}
}

func TestFileSizeLimit(t *testing.T) {
	res, err := Run(context.Background(), Spec{Dir: t.TempDir(), Command: "head -c 100000 /dev/zero > big", Limits: Limits{FileSize: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Success() {
		t.Error("writing past RLIMIT_FSIZE succeeded")
	}
}

// BenchmarkRunTrue measures the harness's cost per command: /bin/true's own
// time is negligible, so ns/op is the sandbox overhead (fork, namespaces,
// shell, limits, wait).
func BenchmarkRunTrue(b *testing.B) {
	dir, home := b.TempDir(), b.TempDir()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), Spec{Dir: dir, Command: "/bin/true", Home: home}); err != nil {
			b.Fatal(err)
		}
	}
}

func pidNamespace() bool { return chooseLevel(true).pid }

// BenchmarkExecTrue is the floor BenchmarkRunTrue is compared with: a bare
// fork and exec of /bin/true, no shell, namespaces or limits.
func BenchmarkExecTrue(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
