package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"hone": func() { os.Exit(Main(os.Args[1:])) },
	})
}

// TestScripts runs every testdata/script/*.txtar scenario against the real
// hone binary and real git repositories in temp dirs. Each script starts in an
// empty $WORK with a git identity set; `hone` runs the binary under test.
func TestScripts(t *testing.T) {
	goEnv := goToolEnv(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exitcode": cmdExitCode},
		Setup: func(env *testscript.Env) error {
			env.Setenv("GIT_AUTHOR_NAME", "hone test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@hone.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "hone test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@hone.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir+"/.home")
			env.Setenv("NO_COLOR", "1")
			for _, k := range []string{"PATH", "GOROOT", "TMPDIR"} {
				if v, ok := os.LookupEnv(k); ok {
					env.Setenv(k, v)
				}
			}
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			return os.MkdirAll(env.WorkDir+"/.home", 0o755)
		},
	})
}

// goToolEnv pins the go command's caches to the ones this test run uses.
// Scripts get a fresh HOME, and without this any `go` a script runs would
// rebuild the standard library and tools into an empty cache.
func goToolEnv(t *testing.T) map[string]string {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return map[string]string{"GOCACHE": vals[0], "GOMODCACHE": vals[1], "GOPATH": vals[2]}
}

// cmdExitCode is the script command `exitcode N prog args...`: it runs prog
// like exec and fails unless prog exits with status N. stdout and stderr are
// then checked as after exec.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
