package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/e2e/gowarm"
	"github.com/hone-perf/hone/internal/reexec"
	"github.com/hone-perf/hone/internal/testbuild"
	"github.com/hone-perf/hone/verdict"
)

func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	// In the test process, not in the hones testscript starts from it: the
	// jails of both run from the jail's helper beside the test binary.
	if filepath.Base(os.Args[0]) != "hone" {
		flag.Parse()
		if !testing.Short() {
			e2e.InstallHelper()
		}
	}
	testscript.Main(m, map[string]func(){
		"hone": func() {
			// The hone a script runs is this binary started afresh, with
			// no test flags: the unit tier's -short comes to it through
			// the environment, so that the jail's launch refuses there as
			// in the test process, and a script that would start a jail
			// fails the unit tier instead of running in it.
			if os.Getenv(unitTierEnv) == "1" {
				flag.Set("test.short", "true")
			}
			os.Exit(Main(os.Args[1:]))
		},
	})
}

// unitTierEnv tells the hones that scripts run that this is the unit tier.
const unitTierEnv = "HONE_TEST_UNIT_TIER"

// TestScripts runs every testdata/script/*.txtar scenario against the real
// hone binary and real git repositories in temp dirs. Each script starts in an
// empty $WORK with a git identity set; `hone` runs the binary under test.
//
// Their verdicts are decided by the work the fixture programs declare, so
// outside the unit tier (-short, where no script reaches a jail) the test
// binary, which is the hone they run, must carry the work meter.
func TestScripts(t *testing.T) {
	if !testing.Short() && !testbuild.WorkMeter {
		t.Fatalf("the scripts' verdicts are decided by declared work, not the clock: run them with -tags %s (bash scripts/test.sh), or with -short for the unit tier", testbuild.Tag)
	}
	p := scriptParams(t, nil)
	p.Dir = "testdata/script"
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		// A script's calibration measures on the clock and so takes the
		// machine's turn, which root's hone shares with every hone on the
		// machine: a script once waited nine minutes behind a 14-minute
		// turn of another hone, and timed out. Each script gets a turn of
		// its own. What the scripts read of a calibration is the count of
		// its sessions (at three pairs the rule can decide none faster or
		// slower), which no overlap with other work can change.
		env.Setenv(verdict.BenchLockEnv, filepath.Join(env.WorkDir, ".home", "bench.lock"))
		return nil
	}
	testscript.Run(t, p)
}

// scriptParams are the scripts' commands and environment; extra holds more
// variables for every script.
func scriptParams(t *testing.T, extra map[string]string) testscript.Params {
	goEnv := goToolEnv(t)
	return testscript.Params{
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exitcode": cmdExitCode, "jsonkeys": cmdJSONKeys, "warmgocache": cmdWarmGoCache},
		Setup: func(env *testscript.Env) error {
			env.Setenv("GIT_AUTHOR_NAME", "hone test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@hone.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "hone test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@hone.invalid")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir+"/.home")
			env.Setenv("NO_COLOR", "1")
			if testing.Short() {
				env.Setenv(unitTierEnv, "1")
			}
			for _, k := range []string{"PATH", "GOROOT", "TMPDIR"} {
				if v, ok := os.LookupEnv(k); ok {
					env.Setenv(k, v)
				}
			}
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			for k, v := range extra {
				env.Setenv(k, v)
			}
			return os.MkdirAll(env.WorkDir+"/.home", 0o755)
		},
	}
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

// cmdWarmGoCache is the script command `warmgocache GITDIR`: it seeds the
// trusted Go build cache of the repository whose git directory is GITDIR
// with the standard library (see gowarm), for scripts that judge Go
// targets and are not about a cold build.
func cmdWarmGoCache(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: warmgocache GITDIR")
	}
	ts.Check(gowarm.Seed(ts.MkAbs(args[0])))
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

// snakeCase is the form of every JSON field name hone prints.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// cmdJSONKeys is the script command `jsonkeys`: the last command's stdout
// must be one or more JSON values (an object, an array, or one object per
// line) in which every object key is snake_case.
func cmdJSONKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: jsonkeys")
	}
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile("stdout")))
	values := 0
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			ts.Fatalf("jsonkeys: stdout is not JSON: %v", err)
		}
		values++
		var bad []string
		var null []string
		walkKeys(v, "", func(path, key string, value any) {
			if !snakeCase.MatchString(key) {
				bad = append(bad, path+"."+key)
			}
			if value == nil {
				null = append(null, path+"."+key)
			}
		})
		if len(bad) > 0 {
			ts.Fatalf("jsonkeys: keys that are not snake_case: %s", strings.Join(bad, ", "))
		}
		// An empty list is [], an absent value is left out: null is neither.
		if len(null) > 0 {
			ts.Fatalf("jsonkeys: keys whose value is null: %s", strings.Join(null, ", "))
		}
	}
	if values == 0 {
		ts.Fatalf("jsonkeys: stdout holds no JSON")
	}
}

// walkKeys calls fn with every object key in v and the path to its object.
func walkKeys(v any, path string, fn func(path, key string, value any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			fn(path, k, sub)
			walkKeys(sub, path+"."+k, fn)
		}
	case []any:
		for i, sub := range x {
			walkKeys(sub, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}
