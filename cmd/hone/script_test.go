package main

import (
	"os"
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
