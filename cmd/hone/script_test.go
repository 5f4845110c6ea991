package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
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
			for _, k := range []string{"PATH", "GOCACHE", "GOPATH", "GOROOT", "GOMODCACHE", "TMPDIR"} {
				if v, ok := os.LookupEnv(k); ok {
					env.Setenv(k, v)
				}
			}
			return os.MkdirAll(env.WorkDir+"/.home", 0o755)
		},
	})
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
