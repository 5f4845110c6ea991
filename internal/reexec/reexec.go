// Package reexec lets hone's own executable play other programs: the
// jail's meter and root stager, the differential driver, the Go cache
// program. Each registers, under the name it is started by (its argv[0]),
// the function that is its whole life; main and every TestMain call Init
// first, so which program a process is gets decided in one visible place
// and no package's init takes the process over behind its importer's back.
//
// A test binary re-executed under a registered name is such a child, not a
// test run: Init keeps go test's coverage out of it (see Init).
package reexec

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

var (
	mu         sync.Mutex
	registered = map[string]func(){}
)

// Register makes main the program of processes started as name. main
// never returns: it ends the process with os.Exit. Registering a name
// twice is a programming error and panics.
func Register(name string, main func()) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registered[name]; dup {
		panic(fmt.Sprintf("reexec: %s registered twice", name))
	}
	registered[name] = main
}

// Init runs the registered program whose name the process was started by
// and does not return; it returns false when the process is no such
// child, which then goes on as itself.
//
// A child of a test binary built with -cover would write coverage
// counters of its own into GOCOVERDIR at exit, and go test would fold
// lines the child ran (the meter, the driver) into the figure of the
// package under test; the child drops GOCOVERDIR first so the figure
// counts the test process alone.
func Init() bool {
	mu.Lock()
	main, ok := registered[filepath.Base(os.Args[0])]
	mu.Unlock()
	if !ok {
		return false
	}
	os.Unsetenv("GOCOVERDIR")
	main()
	panic("reexec: the program registered as " + filepath.Base(os.Args[0]) + " returned")
}
