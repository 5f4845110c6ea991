package jail

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hone-perf/hone"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/reexec"
)

// The stager and the meter start for every jailed run, and hone itself
// re-executed costs what its 31 MB and its dependencies' package
// initialisation cost: about 22 ms of CPU and 800 page faults per start on
// this project's machine, twice a run, against 6 ms and 240 for a program
// of this package alone (cmd/hone-jail-helper). So hone starts that program when
// it is installed beside hone's own executable, and only when it may trust
// it as it trusts itself: the same owner or root, nobody else may write it
// or its folder, and it implements the very jail this hone was built with
// (these sources, the same dependencies, the same Go). A helper left over
// from an older hone would bring back that version's weaker jail; it is
// passed over, and hone plays both parts itself as before.

// HelperName is the helper's file name, beside hone's executable.
const HelperName = "hone-jail-helper"

// sources are this package's files, for ImplementationID.
//
//go:embed *.go
var sources embed.FS

// ImplementationID names the jail this executable implements: a hash of
// this package's and internal/reexec's sources, the module's go.mod and
// go.sum (the dependencies' versions) and the Go release. Two executables
// built from the same sources give the same ID.
func ImplementationID() string {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	ents, _ := sources.ReadDir(".")
	for _, e := range ents {
		b, _ := sources.ReadFile(e.Name())
		part(h, e.Name(), b)
	}
	part(h, "reexec.go", reexec.Source)
	part(h, "go.mod", hone.GoMod)
	part(h, "go.sum", hone.GoSum)
	return hex.EncodeToString(h.Sum(nil))
}

// part adds a named file to h, its length first so no two sets of files
// hash alike.
func part(h io.Writer, name string, b []byte) {
	fmt.Fprintf(h, "%s %d\n", name, len(b))
	h.Write(b)
}

// roles is the executable the stager and the meter run from.
type roles struct {
	start string // what to start: the helper, or this executable (/proc/self/exe)
	file  string // the file bound into the jail as the meter
}

var roleExecutable = sync.OnceValues(func() (roles, error) {
	exe, err := os.Executable()
	if err != nil {
		return roles{}, errs.Wrap(errs.Failure, err, "jail: cannot find hone's own executable to run the meter")
	}
	if helper, ok := trustedHelper(exe); ok {
		return roles{start: helper, file: helper}, nil
	}
	return roles{start: "/proc/self/exe", file: exe}, nil
})

// helperIDWait bounds how long hone waits for a helper to say its ID.
const helperIDWait = 10 * time.Second

// trustedHelper returns the helper beside exe when hone may use it.
func trustedHelper(exe string) (string, bool) {
	self, err := os.Stat(exe)
	if err != nil {
		return "", false
	}
	owner := self.Sys().(*syscall.Stat_t).Uid
	path := filepath.Join(filepath.Dir(exe), HelperName)
	if !ownedBy(path, owner, true) || !ownedBy(filepath.Dir(path), owner, false) {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), helperIDWait)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "id").Output()
	return path, err == nil && strings.TrimSpace(string(out)) == ImplementationID()
}

// ownedBy reports whether path is owned by owner or root and nobody else
// may write it; file asks for a regular file, not a link, otherwise a
// folder.
func ownedBy(path string, owner uint32, file bool) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (st.Uid != owner && st.Uid != 0) || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	if file {
		return fi.Mode().IsRegular()
	}
	return fi.IsDir()
}
