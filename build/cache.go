package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/scratch"
)

// The baseline build cache keeps the pin's post-build checkout and output
// folder in hone's state directory, where no jail ever sees them (a jail
// only gets the run's own copies), with a manifest of every file recorded
// at build time. Each use copies the entry into the run and checks every
// byte against the manifest on the way; an entry that differs is
// discarded and the baseline rebuilt. Failed builds are never cached.

// Key is what a cached build depends on. Anything that changes what the
// build command would produce, or what it could see, is in it.
type Key struct {
	Tree       string // the commit's tree: the same sources under any commit
	Command    string // the build command
	TargetPath string // where it runs
	Isolation  string // weak builds see other paths than jailed ones
	Sanitizers string // the sanitizer build variant ("" for none)
	Layout     string // the layout (Layout.cacheKey; "" for the plain build)
}

// String is the entry's folder name.
func (k Key) String() string {
	h := sha256.New()
	fmt.Fprintf(h, "hone build v2\x00%s\x00%s\x00%s\x00%s\x00%s", k.Tree, k.Command, k.TargetPath, k.Isolation, k.Sanitizers)
	// Appended only when set, so the plain builds' entries keep their names.
	if k.Layout != "" {
		fmt.Fprintf(h, "\x00%s", k.Layout)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// manifest describes one cache entry.
type manifest struct {
	Version int       `json:"version"`
	Key     Key       `json:"key"`
	Created time.Time `json:"created"`
	Src     []Entry   `json:"src"`
	Out     []Entry   `json:"out"`
	// BuildCPU is what the build cost (Side.BuildCPU), so a verdict on a
	// cached baseline still has the figure; 0 in entries made before it.
	BuildCPU time.Duration `json:"build_cpu_ns,omitempty"`
	// Unmoved is a layout build's Side.Unmoved, so a cached layout that
	// did not move still says why.
	Unmoved string `json:"unmoved,omitempty"`
}

const (
	manifestVersion = 1
	manifestName    = "manifest.json"
	maxManifest     = 256 << 20
)

// cache is the build cache of one repository.
type cache struct{ dir string }

func (c cache) entry(k Key) string { return filepath.Join(c.dir, k.String()) }

func (c cache) lock(ctx context.Context) (*lock.Lock, error) {
	return lock.Acquire(ctx, filepath.Join(c.dir, ".lock"), "update the build cache")
}

// load copies the entry for k into src and out (which must not exist),
// verified against its manifest, and returns the manifest. It returns nil
// when there is no entry; discarded names the first file of an entry that
// differed from its manifest, which is then removed.
func (c cache) load(ctx context.Context, k Key, src, out string) (hit *manifest, discarded string, err error) {
	dir := c.entry(k)
	m, err := readManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err == nil && m.Key != k {
		err = &mismatch{manifestName, "names another build"}
	}
	if err == nil {
		if err = copyVerified(filepath.Join(dir, "src"), src, m.Src); err == nil {
			err = copyVerified(filepath.Join(dir, "out"), out, m.Out)
			prefixMismatch(err, "out/")
		} else {
			prefixMismatch(err, "src/")
		}
	}
	var mm *mismatch
	switch {
	case err == nil:
		now := time.Now()
		os.Chtimes(dir, now, now)
		return m, "", nil
	case errors.As(err, &mm):
		for _, p := range []string{src, out} {
			scratch.RemoveAll(p)
		}
		if rerr := c.discard(ctx, dir); rerr != nil {
			return nil, "", rerr
		}
		return nil, mm.Error(), nil
	}
	return nil, "", errs.Wrap(errs.Failure, err, "build cache: cannot read %s", dir)
}

func (c cache) discard(ctx context.Context, dir string) error {
	held, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer held.Release()
	if err := scratch.RemoveAll(dir); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot remove the damaged entry %s", dir)
	}
	return nil
}

// store keeps a verified copy of src and out, described by m, as the
// entry for m.Key. Of two builds racing to store the same key the first
// wins.
func (c cache) store(ctx context.Context, m manifest, src, out string) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot create %s", c.dir)
	}
	tmp, err := os.MkdirTemp(c.dir, ".tmp-")
	if err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot create a folder in %s", c.dir)
	}
	defer scratch.RemoveAll(tmp)
	if err := copyVerified(src, filepath.Join(tmp, "src"), m.Src); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: the built checkout changed while hone stored it")
	}
	if err := copyVerified(out, filepath.Join(tmp, "out"), m.Out); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: the build output changed while hone stored it")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot encode the manifest")
	}
	if err := atomicfile.Write(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot write the manifest")
	}
	held, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer held.Release()
	final := c.entry(m.Key)
	if _, err := os.Lstat(final); err == nil {
		return nil
	}
	if err := os.Rename(tmp, final); err != nil {
		return errs.Wrap(errs.Failure, err, "build cache: cannot store %s", final)
	}
	return nil
}

func readManifest(dir string) (*manifest, error) {
	fd, err := unix.Open(filepath.Join(dir, manifestName), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, os.ErrNotExist
		}
		return nil, &mismatch{manifestName, err.Error()}
	}
	f := os.NewFile(uintptr(fd), manifestName)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifest))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Version != manifestVersion {
		return nil, &mismatch{manifestName, "unreadable"}
	}
	return &m, nil
}

// prefixMismatch names a mismatch's file from the entry's top.
func prefixMismatch(err error, prefix string) {
	var mm *mismatch
	if errors.As(err, &mm) {
		mm.path = prefix + mm.path
	}
}

// verify checks the entry in dir against its manifest without using it,
// returning the first difference (a *mismatch), or the missing manifest.
func (c cache) verify(dir string) error {
	m, err := readManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return &mismatch{manifestName, "missing"}
	}
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.dir, ".verify-")
	if err != nil {
		return err
	}
	defer scratch.RemoveAll(tmp)
	if err := copyVerified(filepath.Join(dir, "src"), filepath.Join(tmp, "src"), m.Src); err != nil {
		prefixMismatch(err, "src/")
		return err
	}
	err = copyVerified(filepath.Join(dir, "out"), filepath.Join(tmp, "out"), m.Out)
	prefixMismatch(err, "out/")
	return err
}
