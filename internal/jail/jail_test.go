package jail

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/tier"
)

func TestRunReportsExitStatusAndOutput(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "echo out; echo err >&2; exit 3"})
	if res.ExitCode != 3 || res.Success() || res.Signaled {
		t.Errorf("exit = %d (signaled %v), want 3", res.ExitCode, res.Signaled)
	}
	if got := string(res.Stdout.Bytes()); got != "out\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(res.Stderr.Tail(100)); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
	if res.Isolation != "full" || !res.NetworkDenied {
		t.Errorf("isolation %q, network denied %v", res.Isolation, res.NetworkDenied)
	}
	if os.Geteuid() == 0 && res.HostUID == 0 {
		t.Error("hone is root and the jail ran as root")
	}
}

func TestRunFeedsStdin(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "tr a-z A-Z", Stdin: strings.NewReader("hello\n")})
	if got := string(res.Stdout.Bytes()); got != "HELLO\n" || res.Shell {
		t.Errorf("stdout = %q (shell %v)", got, res.Shell)
	}
}

func TestEnvironmentIsExactlyWhatHoneSets(t *testing.T) {
	tier.Jail(t)
	t.Setenv("HONE_SECRET_TOKEN", "x")
	res := run(t, Spec{Command: "env", Dir: "/tmp", Path: []string{"/opt/tool/bin"}, Env: []string{"HONE_OUT=/out", "LANG=C.UTF-8"}})
	got := strings.Split(strings.TrimSpace(string(res.Stdout.Bytes())), "\n")
	want := []string{
		"PATH=/opt/tool/bin:" + systemPath, "HOME=/home/hone", "TMPDIR=/tmp", "LANG=C.UTF-8",
		"LC_ALL=C", "USER=hone", "PWD=/tmp", "HONE_OUT=/out",
	}
	if !slices.Equal(got, want) {
		t.Errorf("environment:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(Environment("/tmp", []string{"/opt/tool/bin"}, []string{"HONE_OUT=/out", "LANG=C.UTF-8"}), want) {
		t.Error("Environment does not say what the command gets")
	}
}

func TestJailHasNoPrivileges(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "grep -E '^(NoNewPrivs|CapEff|CapBnd|CapPrm|CapAmb)' /proc/self/status"})
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapPrm:\t0000000000000000", "CapAmb:\t0000000000000000"} {
		if !strings.Contains(string(res.Stdout.Bytes()), want) {
			t.Errorf("status lacks %q:\n%s", want, res.Stdout.Bytes())
		}
	}
}

func TestCompilesAndRunsCInTheJail(t *testing.T) {
	tier.Jail(t)
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	src := t.TempDir()
	writeFile(t, src, "hello.c", "#include <stdio.h>\nint main(void) { puts(\"hello from C\"); return 0; }\n", 0o644)
	res := run(t, Spec{
		Command: "cc -O2 -o /tmp/hello /src/hello.c && /tmp/hello",
		Mounts:  []Mount{{Host: src, Jail: "/src", Mode: ReadOnly}},
	})
	if !res.Success() || string(res.Stdout.Bytes()) != "hello from C\n" {
		t.Fatalf("%s: %s%s", res.Describe(), res.Stdout.Bytes(), res.Stderr.Tail(2000))
	}
}

func TestMakeWorksInACopy(t *testing.T) {
	tier.Jail(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	tree := t.TempDir()
	writeFile(t, tree, "Makefile", "out.txt: in.txt\n\tcp in.txt out.txt\n\techo built >> out.txt\ntest: out.txt\n\tcat out.txt\n", 0o644)
	writeFile(t, tree, "in.txt", "input\n", 0o644)
	res := run(t, Spec{Command: "make -s test", Dir: "/work", Mounts: []Mount{{Host: tree, Jail: "/work", Mode: Copy}}})
	if !res.Success() || string(res.Stdout.Bytes()) != "input\nbuilt\n" {
		t.Fatalf("%s: %s%s", res.Describe(), res.Stdout.Bytes(), res.Stderr.Tail(2000))
	}
	if _, err := os.Stat(filepath.Join(tree, "out.txt")); err == nil {
		t.Error("make's output reached the host tree")
	}
}

// A copy is the same tree: modes, symlinks (not followed) and modification
// times survive, so make sees up-to-date targets as up to date.
func TestCopyKeepsModesLinksAndTimes(t *testing.T) {
	tier.Jail(t)
	tree := t.TempDir()
	writeFile(t, tree, "run.sh", "#!/bin/sh\necho ran\n", 0o705)
	writeFile(t, tree, "data", "d\n", 0o604)
	if err := os.Symlink("data", filepath.Join(tree, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname-on-the-host", filepath.Join(tree, "dangling")); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(tree, "data"), old, old); err != nil {
		t.Fatal(err)
	}
	res := run(t, Spec{Command: "stat -c '%n %a %Y' run.sh data && readlink link dangling && ./run.sh", Dir: "/w", Mounts: []Mount{{Host: tree, Jail: "/w", Mode: Copy}}})
	want := "run.sh 705 " + mtime(t, filepath.Join(tree, "run.sh")) + "\ndata 604 " + strconv.FormatInt(old.Unix(), 10) + "\ndata\n/etc/hostname-on-the-host\nran\n"
	if got := string(res.Stdout.Bytes()); got != want {
		t.Errorf("in the copy:\n%s\nwant:\n%s%s", got, want, res.Stderr.Tail(1000))
	}
}

func mtime(t *testing.T, p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(fi.ModTime().Unix(), 10)
}

func TestGoBuildsWithAWritableCache(t *testing.T) {
	tier.Jail(t)
	goroot := "/usr/local/go"
	if _, err := os.Stat(filepath.Join(goroot, "bin/go")); err != nil {
		t.Skip("no Go toolchain at /usr/local/go")
	}
	mod := t.TempDir()
	writeFile(t, mod, "go.mod", "module example.com/hello\n\ngo 1.21\n", 0o644)
	writeFile(t, mod, "main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from Go\") }\n", 0o644)
	// The tests' shared cache (e2e.GoCache), mounted writable: a cold
	// standard library is not what this test is about.
	res := run(t, Spec{
		Command: "go build -o /tmp/hello . && /tmp/hello",
		Dir:     "/src",
		Path:    []string{goroot + "/bin"},
		Env:     []string{"GOCACHE=/hone/gocache", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOPROXY=off"},
		Mounts:  []Mount{{Host: mod, Jail: "/src", Mode: Copy}, {Host: e2e.GoCache(t), Jail: "/hone/gocache", Mode: ReadWrite}},
		Timeout: 5 * time.Minute,
	})
	if !res.Success() || string(res.Stdout.Bytes()) != "hello from Go\n" {
		t.Fatalf("%s: %s%s", res.Describe(), res.Stdout.Bytes(), res.Stderr.Tail(3000))
	}
}

func TestTimeoutKillsAndStillReports(t *testing.T) {
	tier.Jail(t)
	start := time.Now()
	res := run(t, Spec{Command: "sleep 100", Timeout: 300 * time.Millisecond})
	if !res.TimedOut || res.Success() || !res.Signaled {
		t.Fatalf("want a timeout, got %s", res.Describe())
	}
	if res.Wall < 300*time.Millisecond || time.Since(start) > 20*time.Second {
		t.Errorf("wall %v, took %v", res.Wall, time.Since(start))
	}
}

func TestCancelKillsAndErrs(t *testing.T) {
	tier.Jail(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Spec{Command: "sleep 100"})
	if err == nil || !errs.Is(err, errs.Failure) {
		t.Fatalf("cancelled run returned %v", err)
	}
	if res == nil || !res.MeterFailed || time.Since(start) > 20*time.Second {
		t.Errorf("result %+v after %v", res, time.Since(start))
	}
}

func TestOutputCapKeepsHashOfAll(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "seq 1 100000", OutputCap: 100})
	if !res.Stdout.Truncated() || len(res.Stdout.Bytes()) != 100 || res.Stdout.Len() < 500000 {
		t.Errorf("cap not applied: kept %d of %d", len(res.Stdout.Bytes()), res.Stdout.Len())
	}
	if !strings.HasSuffix(string(res.Stdout.Tail(7)), "100000\n") {
		t.Errorf("tail = %q", res.Stdout.Tail(7))
	}
}

func TestFileSizeLimit(t *testing.T) {
	tier.Jail(t)
	res := run(t, Spec{Command: "head -c 100000 /dev/zero > /tmp/big", Limits: Limits{FileSize: 4096}})
	if res.Success() {
		t.Error("writing past RLIMIT_FSIZE succeeded")
	}
}

func TestCopyLargerThanScratchFailsTheRun(t *testing.T) {
	tier.Jail(t)
	tree := t.TempDir()
	writeFile(t, tree, "big", strings.Repeat("x", 2<<20), 0o644)
	res, err := Run(context.Background(), Spec{Command: "/bin/true", Mounts: []Mount{{Host: tree, Jail: "/w", Mode: Copy}}, Limits: Limits{Scratch: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.MeterFailed || res.Success() || !strings.Contains(res.MeterError, "/w") {
		t.Errorf("a copy that does not fit: %s", res.Describe())
	}
}

func TestInvalidSpecsAreRefusedBeforeAnythingRuns(t *testing.T) {
	tier.Jail(t)
	dir := t.TempDir()
	for name, s := range map[string]Spec{
		"empty command":      {},
		"relative dir":       {Command: "x", Dir: "work"},
		"unclean dir":        {Command: "x", Dir: "/work/../etc"},
		"mount over /etc":    {Command: "x", Mounts: []Mount{{Host: dir, Jail: "/etc/x"}}},
		"mount over root":    {Command: "x", Mounts: []Mount{{Host: dir, Jail: "/"}}},
		"mount in meter dir": {Command: "x", Mounts: []Mount{{Host: dir, Jail: "/.hone"}}},
		"two mounts":         {Command: "x", Mounts: []Mount{{Host: dir, Jail: "/a"}, {Host: dir, Jail: "/a"}}},
		"relative host":      {Command: "x", Mounts: []Mount{{Host: "rel", Jail: "/a"}}},
		"unknown mode":       {Command: "x", Mounts: []Mount{{Host: dir, Jail: "/a", Mode: 7}}},
		"network":            {Command: "x", Network: "sometimes"},
		"isolation":          {Command: "x", Isolation: "none"},
		"env":                {Command: "x", Env: []string{"NOEQUALS"}},
		"read-only in /proc": {Command: "x", ReadOnly: []string{"/proc/1"}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Run(context.Background(), s); !errs.Is(err, errs.Invalid) {
				t.Errorf("got %v, want an invalid-input error", err)
			}
		})
	}
	_, err := Run(context.Background(), Spec{Command: "x", Mounts: []Mount{{Host: filepath.Join(dir, "missing"), Jail: "/a"}}})
	if !errs.Is(err, errs.NotFound) {
		t.Errorf("missing host directory: %v", err)
	}
	_, err = Run(context.Background(), Spec{Command: "x", Mounts: []Mount{{Host: dir, Jail: "/a", Mode: Copy}, {Host: dir, Jail: "/a/b"}}})
	if !errs.Is(err, errs.Invalid) {
		t.Errorf("mount inside a copy: %v", err)
	}
}

// The root stager binds hone's directories in a mount namespace of its
// own: the host's mount table is the same after a run.
func TestRunLeavesHostMountsAlone(t *testing.T) {
	tier.Jail(t)
	before, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	run(t, Spec{Command: "/bin/true", Mounts: []Mount{{Host: t.TempDir(), Jail: "/w", Mode: Copy}, {Host: t.TempDir(), Jail: "/o", Mode: ReadWrite}}})
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if string(before) != string(after) {
		t.Errorf("the host's mounts changed:\n%s\nthen:\n%s", before, after)
	}
}

func TestConcurrentRunsStayApart(t *testing.T) {
	tier.Jail(t)
	const n = 4
	results := make(chan string, n)
	for i := range n {
		go func() {
			res, err := Run(context.Background(), Spec{Command: "sh -c 'echo " + strconv.Itoa(i) + " > /tmp/id; sleep 0.2; cat /tmp/id'"})
			if err != nil {
				results <- err.Error()
				return
			}
			results <- strings.TrimSpace(string(res.Stdout.Bytes())) + "/" + strconv.Itoa(i)
		}()
	}
	for range n {
		got := <-results
		a, b, _ := strings.Cut(got, "/")
		if a != b {
			t.Errorf("a run saw another's /tmp: %s", got)
		}
	}
}

// LeakSanitizer stops the program with ptrace to scan its memory, and
// AddressSanitizer reserves terabytes of shadow memory: both must work in
// the jail, with the data limit lifted and ptrace let through the filter,
// as sanitizer builds have them.
func TestSanitizersWorkInTheJail(t *testing.T) {
	tier.Jail(t)
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("no C compiler")
	}
	src := t.TempDir()
	// Ten blocks, each pointer overwritten by the next: a single one's
	// pointer can linger in a register or on the stack, where LeakSanitizer
	// finds it and reports no leak (seen once under two hogs).
	writeFile(t, src, "leak.c", "#include <stdlib.h>\nvoid *volatile sink;\nint main(void) { for (int i = 0; i < 10; i++) sink = malloc(77); sink = 0; return 0; }\n", 0o644)
	res := run(t, Spec{
		Command: "cc -fsanitize=address -g -o /tmp/leak /src/leak.c && /tmp/leak",
		Mounts:  []Mount{{Host: src, Jail: "/src", Mode: ReadOnly}},
		Limits:  Limits{Data: NoLimit},
		Seccomp: Seccomp{Ptrace: true},
	})
	stderr := string(res.Stderr.Bytes())
	if strings.Contains(stderr, "LeakSanitizer has encountered a fatal error") || !strings.Contains(stderr, "detected memory leaks") {
		t.Errorf("%s:\n%s", res.Describe(), stderr)
	}
}
