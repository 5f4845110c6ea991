// Package testproc looks at the machine's processes, for tests that must
// prove a command left nothing running behind it, and starts the helper
// processes tests race against.
//
// It is for _test.go files only: no non-test code may import it.
package testproc

import (
	"bufio"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/e2e"
	"github.com/hone-perf/hone/internal/reexec"
)

// Count returns how many live processes have s in their command line, its
// arguments joined by spaces.
func Count(t testing.TB, s string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			n++
		}
	}
	return n
}

// StartReady starts cmd, a helper process, and waits until it prints the
// line ready on its standard output, so the test goes on only once the
// helper holds what it was started to hold. The helper is killed when the
// test ends.
func StartReady(t testing.TB, cmd *exec.Cmd, ready string) {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != ready+"\n" {
		t.Fatalf("helper %s said %q, want %q", cmd.Path, line, ready)
	}
}

// CopyExecutable copies the running test binary to dst, mode 0755, for a
// test that runs it as another user: the binary go test built sits in a
// directory only its owner may enter.
func CopyExecutable(t testing.TB, dst string) {
	t.Helper()
	src, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Main is the TestMain of a package whose tests start hone's executable
// (the test binary) as one of the programs registered with internal/reexec
// (the jail's meter, the differential driver, the Go cache program):
// reexec.Init first, the jail's helper beside the test binary, then each
// of setup (in the test process only: a
// package whose tests run in parallel sets its environment here, not with
// t.Setenv), then the tests.
func Main(m *testing.M, setup ...func()) {
	if reexec.Init() {
		return
	}
	// The jails the tests start run from the jail's helper, as hone's do
	// where it is installed; -short runs start too few to pay for its
	// build.
	flag.Parse()
	if !testing.Short() {
		e2e.InstallHelper()
	}
	for _, f := range setup {
		f()
	}
	os.Exit(m.Run())
}
