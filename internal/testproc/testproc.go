// Package testproc looks at the machine's processes, for tests that must
// prove a command left nothing running behind it.
//
// It is for _test.go files only: no non-test code may import it.
package testproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
