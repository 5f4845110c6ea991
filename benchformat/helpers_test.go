package benchformat

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/reexec"
)

// scratch holds the harness binaries the tests build once per process.
var scratch string

func TestMain(m *testing.M) {
	if reexec.Init() {
		return
	}
	dir, err := os.MkdirTemp("", "benchformat-test-")
	if err != nil {
		panic(err)
	}
	// The jail user must be able to read the binaries mounted from here.
	if err := os.Chmod(dir, 0o755); err != nil {
		panic(err)
	}
	scratch = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	goOnce, googleOnce     sync.Once
	goBinary, googleBinary string
	goErr, googleErr       error
)

// goBench builds testdata/gobench into a test binary.
func goBench(t testing.TB) string {
	t.Helper()
	goOnce.Do(func() {
		goBinary = filepath.Join(scratch, "gobench.test")
		cmd := exec.Command("go", "test", "-c", "-o", goBinary, ".")
		cmd.Dir = filepath.Join("testdata", "gobench")
		if out, err := cmd.CombinedOutput(); err != nil {
			goErr = errors.New(string(out))
		}
	})
	if goErr != nil {
		t.Fatalf("cannot build the Go benchmarks: %v", goErr)
	}
	return goBinary
}

// googleBench builds testdata/googlebench against the installed Google
// Benchmark library, or skips.
func googleBench(t testing.TB) string {
	t.Helper()
	googleOnce.Do(func() {
		if _, err := os.Stat("/usr/include/benchmark/benchmark.h"); err != nil {
			googleErr = errors.New("Google Benchmark is not installed (apt-get install libbenchmark-dev)")
			return
		}
		googleBinary = filepath.Join(scratch, "googlebench")
		cmd := exec.Command("c++", "-O2", "-o", googleBinary, filepath.Join("testdata", "googlebench", "bench.cc"), "-lbenchmark", "-lpthread")
		if out, err := cmd.CombinedOutput(); err != nil {
			googleErr = errors.New("cannot build the Google benchmarks: " + string(out))
		}
	})
	if googleErr != nil {
		t.Skip(googleErr)
	}
	return googleBinary
}

// harnessOutput runs a bench command under sh with BENCH naming the
// harness binary, and returns its stdout whatever its exit status.
func harnessOutput(t testing.TB, binary, command string, env ...string) []byte {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(append(os.Environ(), "BENCH="+binary), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: %v", command, err)
		}
	}
	return stdout.Bytes()
}

func parse(t testing.TB, format string, out []byte) *Run {
	t.Helper()
	run, err := Parse(format, out)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, out)
	}
	return run
}

func names(r *Run) []string {
	var out []string
	for _, b := range r.Benchmarks {
		out = append(out, b.Name)
	}
	return out
}

// refusedAs checks that err is an invalid-input error of the given kind.
func refusedAs(t testing.TB, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) || !errs.Is(err, errs.Invalid) {
		t.Fatalf("got %v, want an invalid-input error of kind %q", err, kind)
	}
}
