//go:build hone_testmeter

package guard

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// receivePauseEnv names, in hone's test builds only, a folder through
// which a test races two pushes deterministically: a push's hook says
// there that it waits for the receive lock (<pid>.waiting) or that its
// checks are done (<pid>.checked), and, once checked, holds on until the
// folder has a file named go.
const receivePauseEnv = "HONE_TEST_RECEIVE_PAUSE"

func receivePause(what string) {
	dir := os.Getenv(receivePauseEnv)
	if dir == "" {
		return
	}
	os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())+"."+what), nil, 0o644)
	if what != "checked" {
		return
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
