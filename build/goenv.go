package build

import (
	"context"
	"os"
	"os/exec"
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
