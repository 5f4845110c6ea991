// Package reexec lets hone's own executable play other programs: the
// jail's meter and root stager, the differential driver, the Go cache
// program. Each registers, under the name it is started by (its argv[0]),
// the function that is its whole life; main and every TestMain call Init
// first, so which program a process is gets decided in one visible place
// and no package's init takes the process over behind its importer's back.
package reexec

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Source is this file, for the jail's ImplementationID: the helper that
// plays the jail's parts dispatches through it.
//
//go:embed reexec.go
var Source []byte

var (
	mu         sync.Mutex
	registered = map[string]func() int{}
	// initialized is set by Init.
	initialized bool
)

// Register makes main the program of processes started as name; it
// returns the process's exit status. Registering a name twice is a
// programming error and panics.
func Register(name string, main func() int) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registered[name]; dup {
		panic(fmt.Sprintf("reexec: %s registered twice", name))
	}
	registered[name] = main
}

// Init runs the registered program whose name the process was started by
// and does not return; it returns false when the process is no such
// child, which then goes on as itself. Call it first in main and in the
// TestMain of every package whose tests start such children.
func Init() bool {
	mu.Lock()
	initialized = true
	main, ok := registered[filepath.Base(os.Args[0])]
	mu.Unlock()
	if !ok {
		return false
	}
	// Straight to the kernel, past os.Exit's exit hooks: in a test binary
	// built with -cover, the hook would write coverage files the child has
	// no folder for and warn "GOCOVERDIR not set" on its stderr, which is
	// the jailed command's stderr. The children thus run as if built
	// without cover, and the figure go test prints is the tests' own.
	syscall.Exit(main())
	panic("unreachable")
}

// Initialized reports whether Init has run in this process: a package
// about to start its executable as a child asks first, since without Init
// the child would run as the parent again (a test binary would run its
// tests) instead of as the program it was started for.
func Initialized() bool {
	mu.Lock()
	defer mu.Unlock()
	return initialized
}
