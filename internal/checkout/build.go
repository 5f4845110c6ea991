package checkout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/sandbox"
	"github.com/hone-perf/hone/workspace"
)

// BuildTimeout bounds one build command.
const BuildTimeout = workspace.DefaultGateTimeout

// Built is the outcome of building a target in a checkout.
type Built struct {
	Out    string          // HONE_OUT for every later command of this checkout
	Cached bool            // Out was reused from the build cache; nothing ran
	Result *sandbox.Result // the build command's result; nil when cached or when t has no build command
	Key    string          // the cache key, when the cache was asked for
}

// OK reports whether the build produced a usable HONE_OUT.
func (b *Built) OK() bool { return b.Result == nil || b.Result.Success() }

// Build runs t.Build in co (in <co.Dir>/<t.Path>, HONE_OUT outside the
// checkout). A failing build command is not an error: the caller reads
// b.Result. err is set only when the build could not be run.
//
// With cache, a successful build is kept under
// <common git dir>/hone/build-cache/<key>/ and reused by later builds with the
// same key: the commit, the build command and the target path (so a changed
// pin or build command misses). The cache is filled atomically: the build
// writes into a temporary folder that is renamed into place; of two racing
// builds the first rename wins and the other's output is discarded. Failed
// builds are never cached. The compiler version is not part of the key:
// clear the folder after upgrading toolchains.
func Build(ctx context.Context, ws *workspace.Workspace, t *workspace.Target, co *Checkout, cache bool) (*Built, error) {
	if t.Build == "" {
		return &Built{Out: co.Out}, nil
	}
	if !cache {
		res, err := sandbox.Run(ctx, co.Spec(ws, t, co.Out, t.Build, BuildTimeout))
		if err != nil {
			return nil, err
		}
		return &Built{Out: co.Out, Result: res}, nil
	}
	key := CacheKey(co.Commit, t.Build, t.Path)
	root := ws.StatePath("build-cache")
	final := filepath.Join(root, key)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return &Built{Out: final, Cached: true, Key: key}, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "build cache: cannot create %s", root)
	}
	tmp, err := os.MkdirTemp(root, "tmp-"+key[:12]+"-")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "build cache: cannot create a folder in %s", root)
	}
	res, err := sandbox.Run(ctx, co.Spec(ws, t, tmp, t.Build, BuildTimeout))
	if err != nil || !res.Success() {
		os.RemoveAll(tmp)
		if err != nil {
			return nil, err
		}
		// Nothing was cached; report the failure with an output folder that
		// exists so callers can still describe it.
		return &Built{Out: co.Out, Result: res, Key: key}, nil
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if fi, serr := os.Stat(final); serr != nil || !fi.IsDir() {
			return nil, errs.Wrap(errs.Failure, err, "build cache: cannot store %s", final)
		}
	}
	return &Built{Out: final, Result: res, Key: key}, nil
}

// CacheKey is the build cache key of a commit, build command and target path.
func CacheKey(commit, command, targetPath string) string {
	h := sha256.New()
	fmt.Fprintf(h, "hone build v1\x00%s\x00%s\x00%s", commit, command, targetPath)
	return hex.EncodeToString(h.Sum(nil))[:32]
}
