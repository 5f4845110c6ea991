package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
)

// maxGoOutput bounds one output a baseline build may add to the trusted
// Go cache.
const maxGoOutput = 1 << 30

// mergeGoCache adds what a successful baseline build put into its staging
// folder to the trusted Go cache. The staging folder was written in the
// jail, so every name is checked, nothing is followed through a symlink,
// and an output is taken only when its content hashes to its own id, as Go
// names outputs. What an action id maps to cannot be checked without
// building again: that is why only the pin's builds may put.
func mergeGoCache(ctx context.Context, staging, trusted string) (int, error) {
	held, err := lock.Acquire(ctx, filepath.Join(filepath.Dir(trusted), "gocache.lock"), "update the Go build cache")
	if err != nil {
		return 0, err
	}
	defer held.Release()
	added := 0
	prefixes, _ := os.ReadDir(filepath.Join(staging, "a"))
	for _, pre := range prefixes {
		names, _ := os.ReadDir(filepath.Join(staging, "a", pre.Name()))
		for _, n := range names {
			id := n.Name()
			if !isHexID(id) || id[:2] != pre.Name() {
				continue
			}
			ok, err := mergeAction(staging, trusted, id)
			if err != nil {
				return added, errs.Wrap(errs.Failure, err, "cannot add to the Go build cache %s", trusted)
			}
			if ok {
				added++
			}
		}
	}
	now := time.Now()
	os.Chtimes(trusted, now, now)
	return added, nil
}

func mergeAction(staging, trusted, id string) (bool, error) {
	f, err := OpenInTree(staging, filepath.Join("a", id[:2], id))
	if err != nil {
		return false, nil
	}
	line, err := io.ReadAll(io.LimitReader(f, 256))
	f.Close()
	if err != nil {
		return false, nil
	}
	a, ok := parseAction(line)
	if !ok {
		return false, nil
	}
	dst := outputPath(trusted, a.output)
	if fi, err := os.Lstat(dst); err != nil || !fi.Mode().IsRegular() || fi.Size() != a.size {
		o, err := OpenInTree(staging, filepath.Join("o", a.output[:2], a.output))
		if err != nil {
			return false, nil
		}
		ok, err := copyChecked(o, dst, a)
		o.Close()
		if !ok || err != nil {
			return false, err
		}
	}
	return true, writeNew(actionPath(trusted, id), line)
}

// copyChecked copies an output whose content must hash to its id. hone
// writes the trusted cache as itself (root, when it is), so the jail user
// can only read it.
func copyChecked(from *os.File, dst string, a action) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(from, maxGoOutput+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if n != a.size || hex.EncodeToString(h.Sum(nil)) != a.output {
		return false, nil
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, err
	}
	return true, os.Rename(tmp.Name(), dst)
}
