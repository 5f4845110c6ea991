package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/verdict"
)

const askToml = `[bench]
pairs = 2
max_pairs = 2
layouts = 1

[targets.c]
build = "cc -O1 -o $HONE_OUT/prog prog.c"

  [targets.c.bench]
  run = "$HONE_OUT/prog"
`

// An agent whose hone verdict asks the fleet is told, while it waits, the
// proposal's place in the fleet's queue (behind the proposals that came
// first) and then the runner that claimed it, before the verdict. The order is made by the test, not by timing:
// no runner exists until the asker has printed its place, and the runner
// holds its claim, waiting for the machine's turn to measure, until the
// asker has printed who claimed it.
func TestAskerIsToldItsPlaceInTheQueueAndTheRunnerThatClaimedIt(t *testing.T) {
	hone := e2e.Hone(t)
	for _, tool := range []string{"cc", "bwrap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("needs %s: run scripts/ci-deps.sh", tool)
		}
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	benchLock := filepath.Join(dir, "bench.lock")
	env := append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@hone.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@hone.invalid", "NO_COLOR=1",
		verdict.BenchLockEnv+"="+benchLock)
	exitCode := func(err error) int {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	}
	command := func(dir string, args ...string) *exec.Cmd {
		if args[0] == "hone" {
			args[0] = hone
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	must := func(dir string, args ...string) string {
		t.Helper()
		out, err := command(dir, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	server, seed, agent, runnerDir := filepath.Join(dir, "server.git"), filepath.Join(dir, "seed"), filepath.Join(dir, "agent"), filepath.Join(dir, "runner")
	must(dir, "git", "init", "-q", "--bare", "-b", "main", server)
	must(dir, "git", "init", "-q", "-b", "main", seed)
	write(filepath.Join(seed, "hone.toml"), askToml)
	write(filepath.Join(seed, "targets/c/prog.c"), "#include <stdio.h>\nint main(void) { puts(\"1\"); return 0; }\n")
	must(seed, "git", "add", "-A")
	must(seed, "git", "commit", "-q", "-m", "pin")
	must(seed, "git", "push", "-q", server, "main")
	write(filepath.Join(server, "hooks/pre-receive"), "#!/bin/sh\nexec "+hone+" guard pre-receive\n")
	if err := os.Chmod(filepath.Join(server, "hooks/pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(dir, "git", "clone", "-q", "--no-local", server, agent)
	must(dir, "git", "clone", "-q", "--no-local", server, runnerDir)
	must(agent, "git", "config", "hone.runnerRemote", "origin")
	diff := filepath.Join(dir, "idea.diff")
	write(diff, "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts(\"1\"); return 0; }\n+int main(void) { fputs(\"1\\n\", stdout); return 0; }\n")
	id := strings.TrimSpace(must(agent, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", "fputs", "--file", diff))
	write(diff, "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1,2 +1,2 @@\n #include <stdio.h>\n-int main(void) { puts(\"1\"); return 0; }\n+int main(void) { printf(\"1\\n\"); return 0; }\n")
	second := strings.TrimSpace(must(agent, "hone", "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", "printf", "--file", diff))

	// With no runner there, the second proposal is told it is behind the
	// first, and after [runner] wait (the agent's own setting) that it is
	// still queued.
	write(filepath.Join(agent, "hone.toml"), askToml+"\n[runner]\nwait = \"2s\"\n")
	out, err := command(agent, "hone", "verdict", second).CombinedOutput()
	if code := exitCode(err); code != 8 || !strings.Contains(string(out), "hone verdict "+second+": queued: place 2 in the fleet's queue (1 ahead, 0 being judged)") {
		t.Fatalf("asking for the second proposal with no runner there: exit %d, want 8 and its place\n%s", code, out)
	}
	must(agent, "git", "checkout", "--", "hone.toml")

	// The machine's turn is held here, so the runner, once it has claimed
	// the proposal, waits with its claim live. A test build measures by
	// declared work and takes no turn; the runner measures on the clock.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	turn, err := lock.AcquireLong(ctx, benchLock, "hold the machine while the asker looks", nil)
	if err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			turn.Release()
		}
	}()

	asker := command(agent, "hone", "verdict", id)
	askOut, askErr := &testproc.Buffer{}, &testproc.Buffer{}
	asker.Stdout, asker.Stderr = askOut, askErr
	if err := asker.Start(); err != nil {
		t.Fatal(err)
	}
	asked := make(chan error, 1)
	go func() { asked <- asker.Wait() }()
	t.Cleanup(func() { syscall.Kill(-asker.Process.Pid, syscall.SIGKILL) })
	waitFor := func(what string, buf *testproc.Buffer) {
		t.Helper()
		for !strings.Contains(buf.String(), what) {
			select {
			case err := <-asked:
				t.Fatalf("hone verdict ended (%v) before printing %q:\n%s%s", err, what, askOut, askErr)
			case <-ctx.Done():
				t.Fatalf("no %q within the test's time:\n%s", what, buf)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	waitFor("queued: place 1 in the fleet's queue (0 ahead, 0 being judged)", askErr)

	run := command(runnerDir, "hone", "runner", "--name", "runner0", "--class", "quiet", "--once", "--poll", "300ms")
	run.Env = append(run.Env, "HONE_TIER=measure")
	runErr := &testproc.Buffer{}
	run.Stdout, run.Stderr = runErr, runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		run.Wait()
	})
	waitFor("claimed by runner runner0 (class quiet)", askErr)
	turn.Release()
	released = true

	select {
	case err := <-asked:
		if err != nil {
			t.Fatalf("hone verdict: %v\n%s%s\nthe runner:\n%s", err, askOut, askErr, runErr)
		}
	case <-ctx.Done():
		t.Fatalf("no verdict within the test's time:\n%s\nthe runner:\n%s", askErr, runErr)
	}
	if !strings.Contains(askOut.String(), id) {
		t.Errorf("hone verdict printed no verdict on %s:\n%s", id, askOut)
	}
	lines := askErr.String()
	t.Logf("the asker:\n%s", lines)
	if i, j := strings.Index(lines, "place 1"), strings.Index(lines, "claimed by runner runner0"); i < 0 || j < i {
		t.Errorf("the asker's progress, want its place and then the claiming runner:\n%s", lines)
	}
}
