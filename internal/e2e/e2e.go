// Package e2e gives end-to-end test packages outside cmd/hone the real hone
// binary, built once per version of hone's sources and shared by every test
// process that asks for it, so that each suite can live in a package of its
// own (and so within its own go test time limit) while driving hone exactly
// as a user's shell does.
package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/reexec"
	"github.com/hone-perf/hone/internal/testbuild"
)

var (
	once     sync.Once
	bin      string
	buildErr error
)

// Main runs the tests of a package that calls Hone. Call it from TestMain.
// It calls reexec.Init first, for the tests that run hone's packages in
// process (gowarm's build).
func Main(m *testing.M) {
	reexec.Init()
	os.Exit(m.Run())
}

// Hone returns the path of a hone binary built from this module, in a
// folder every user may read and search (attack suites run hone as an
// ordinary user too). It is built without cgo, as the release is.
//
// A suite run has seventeen test packages that drive the binary, and go
// test runs four at once: each linking its own 31 MB hone cost about two
// seconds of CPU and 370 MB of memory, at the moment four packages start
// together. So the binary is kept under a key of everything it is built
// from, and the first test process to need a key builds it while the
// others wait for it.
//
// It is a test build (internal/testbuild): its verdicts are measured by the
// work each bench run declares, not by the clock, except under the
// measurement tier (HONE_TIER=measure), and the entries it makes say so. A
// test of the unit tier (-short) that asks for it is skipped: hone's
// binary starts jails.
func Hone(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("drives the hone binary, which starts jails: not in the unit tier (-short)")
	}
	once.Do(func() { bin, buildErr = build(testbuild.Tag) })
	if buildErr != nil {
		tb.Fatalf("building hone: %v", buildErr)
	}
	return bin
}

var (
	releaseOnce sync.Once
	releaseBin  string
	releaseErr  error
)

// ReleaseHone is hone built as scripts/build.sh builds it, without the
// test build's work meter: for the tests that check what a release build
// refuses.
func ReleaseHone(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds hone: not in the unit tier (-short)")
	}
	releaseOnce.Do(func() { releaseBin, releaseErr = build("") })
	if releaseErr != nil {
		tb.Fatalf("building release hone: %v", releaseErr)
	}
	return releaseBin
}

// InstallHelper puts the jail's helper beside this test binary, as an
// install puts it beside hone, so that the jails the tests start run
// their stager and meter from it rather than from the test binary (a
// cmd/hone test binary starts as slowly as hone). It does nothing when
// one is there already, or when the helper cannot be built: the jail then
// re-runs the test binary, which internal/jail's own tests cover.
func InstallHelper() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dst := filepath.Join(filepath.Dir(exe), helperName)
	if _, err := os.Lstat(dst); err == nil {
		return
	}
	once.Do(func() { bin, buildErr = build(testbuild.Tag) })
	if buildErr != nil {
		return
	}
	src := filepath.Join(filepath.Dir(bin), helperName)
	if os.Link(src, dst) == nil {
		return
	}
	if b, err := os.ReadFile(src); err == nil {
		_ = os.WriteFile(dst, b, 0o755)
	}
}

// helperName is jail.HelperName (internal/jail's tests import this
// package, so it cannot import theirs; TestHelperNameIsTheJails checks).
const helperName = "hone-jail-helper"

// keep is how long a build nobody has asked for stays: long enough for a
// checkout's next runs, short enough that old versions do not pile up.
const keep = 24 * time.Hour

// build builds hone and its helper with tags (a comma-separated list, or
// none) under a key of everything they are built from.
func build(tags string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", err
	}
	root := strings.TrimSpace(string(out))
	key, err := buildKey(root, tags)
	if err != nil {
		return "", err
	}
	base, err := ownDir(filepath.Join(os.TempDir(), fmt.Sprintf("hone-e2e-%d", os.Geteuid())))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, key)
	bin := filepath.Join(dir, "hone")
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		return bin, os.Chtimes(dir, now, now)
	}
	// A plain flock, not internal/lock: lock's tests import testproc,
	// which imports this package.
	lock, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.MkdirTemp(base, key+".tmp-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	// The jail's helper beside it, as an install has it.
	cmd := exec.Command("go", "build", "-tags="+tags, "-o", tmp+"/", "./cmd/hone", "./cmd/hone-jail-helper")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	prune(base, key)
	return bin, nil
}

// listTemplate prints, for hone, its jail helper and each package they import, the package's
// build ID (which changes with its sources, its imports' and the
// toolchain's), and for this module's packages each Go and embedded file.
const listTemplate = `id {{.ImportPath}} {{.BuildID}}
{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}file {{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}file {{$d}}/{{.}}
{{end}}{{end}}{{end}}`

// buildKey names the binary the sources in root build, and opens every
// file of this module it is built from: go test caches a package's result
// by what its own process read, and the build is another process, so
// without this a package that imports none of hone's packages would pass
// from the cache after hone changed.
func buildKey(root, tags string) (string, error) {
	cmd := exec.Command("go", "list", "-tags="+tags, "-deps", "-export", "-f", listTemplate, "./cmd/hone", "./cmd/hone-jail-helper")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", &buildError{err: err, out: string(exit.Stderr)}
		}
		return "", err
	}
	h := sha256.New()
	fmt.Fprintln(h, "tags", tags)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "id":
			fmt.Fprintln(h, rest)
		case "file":
			f, err := os.Open(rest)
			if err != nil {
				return "", err
			}
			f.Close()
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// ownDir makes path a folder of this account's that anyone may search but
// only this account may write, or refuses the one that is there if it is
// not: it is in a shared temporary folder, and a binary in it is run by
// root's tests.
func ownDir(path string) (string, error) {
	if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s is not a folder of this account's that only it may write: remove it and run the tests again", path)
	}
	return path, nil
}

// prune removes what in base nobody has asked for in keep (builds, their
// lock files, folders of builds that died), other than key's.
func prune(base, key string) {
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, key) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > keep {
			os.RemoveAll(filepath.Join(base, name))
		}
	}
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }
