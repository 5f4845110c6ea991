// Package e2e gives end-to-end test packages outside cmd/hone the real hone
// binary, built once per test process, so that each suite can live in a
// package of its own (and so within its own go test time limit) while
// driving hone exactly as a user's shell does.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hone-perf/hone/internal/reexec"
)

var (
	once     sync.Once
	dir, bin string
	buildErr error
)

// Main runs the tests of a package that calls Hone and removes the binary
// afterwards. Call it from TestMain. It calls reexec.Init first, for the
// tests that run hone's packages in process (gowarm's build).
func Main(m *testing.M) {
	reexec.Init()
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// Hone returns the path of a hone binary built from this module, in a
// folder every user may read and search (attack suites run hone as an
// ordinary user too). It is built without cgo, as the release is.
func Hone(tb testing.TB) string {
	tb.Helper()
	once.Do(build)
	if buildErr != nil {
		tb.Fatalf("building hone: %v", buildErr)
	}
	return bin
}

func build() {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		buildErr = err
		return
	}
	if dir, buildErr = os.MkdirTemp("", "hone-e2e-"); buildErr != nil {
		return
	}
	if buildErr = os.Chmod(dir, 0o755); buildErr != nil {
		return
	}
	bin = filepath.Join(dir, "hone")
	if buildErr = openSources(strings.TrimSpace(string(root))); buildErr != nil {
		return
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hone")
	cmd.Dir = strings.TrimSpace(string(root))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		buildErr = &buildError{err: err, out: string(out)}
	}
}

// sourcesTemplate lists the files of this module that the binary is built
// from: each package's Go files and embedded files.
const sourcesTemplate = `{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}{{end}}`

// openSources opens every file the binary is built from. go test caches a
// package's result by what its own process read; the build is another
// process, so without this a package that imports none of hone's packages
// would pass from the cache after hone changed.
func openSources(root string) error {
	cmd := exec.Command("go", "list", "-deps", "-f", sourcesTemplate, "./cmd/hone")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	files := append(strings.Split(string(out), "\n"), filepath.Join(root, "go.mod"), filepath.Join(root, "go.sum"))
	for _, f := range files {
		if f == "" {
			continue
		}
		h, err := os.Open(f)
		if err != nil {
			return err
		}
		h.Close()
	}
	return nil
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
