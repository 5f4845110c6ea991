package build

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// lookGo finds the go command hone itself would run.
func lookGo() (string, error) { return exec.LookPath("go") }

// goCommand runs go outside the jail, as hone: never downloading a
// toolchain a go.mod asks for.
func goCommand(ctx context.Context, goBin, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	return cmd
}

// goModCache is where go keeps modules on the host (go env GOMODCACHE),
// or "" without a go command. It may not exist yet: go mod download makes
// it.
var goModCache = sync.OnceValue(func() string {
	goBin, err := lookGo()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := goCommand(ctx, goBin, "", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})
