// Package build makes the trees every command hone runs on behalf of a
// patch works in, and runs the build itself in the jail.
//
// A run folder under hone's state directory (<git dir>/hone/runs/<kind>-*)
// belongs to one verdict, profile or calibration for its life (an owner
// lock; see internal/scratch). Each side of it (the baseline, the
// candidate) is a plain directory holding a commit's tree, written from the
// object store with no git command, filters or hooks, and an output folder:
//
//	runs/verdict-123/baseline/src   the checkout     /hone/src in the jail
//	runs/verdict-123/baseline/out   the build output /hone/out in the jail
//
// The build sees both writable; afterwards hone takes them back (sealing
// them: see sealAndScan), checks that no tracked file changed and no
// protected file appeared, and from then on every gate, bench run and
// profile workload gets a private copy of src, thrown away after the run,
// and out read-only, at the same paths and with the same environment for
// baseline and candidate, gates and bench alike. The pin's builds are
// cached (cache.go) and fill the trusted Go build cache (gocacheprog.go).
package build

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/workspace"
)

// Paths in the jail, the same for every command of every run.
const (
	SrcDir     = "/hone/src"
	OutDir     = "/hone/out"
	toolDir    = "/hone/bin"
	goCacheDir = "/hone/gocache/trusted"
	goPutsDir  = "/hone/gocache/puts"
	goModDir   = "/hone/gomodcache"
)

// Timeout bounds one build command.
const Timeout = workspace.DefaultGateTimeout

// NoJailError means the full jail cannot run here; its text is jail.Check's
// one line saying what to install or enable.
type NoJailError struct{ Err error }

func (e *NoJailError) Error() string { return e.Err.Error() }
func (e *NoJailError) Unwrap() error { return e.Err }

// Run is one run folder and the settings every command in it shares.
type Run struct {
	repo    *repo.Repo
	dir     *scratch.Dir
	target  *workspace.Target
	sandbox workspace.SandboxConfig
	keep    bool
	owner   account
	empty   string // an empty folder, the source of private copies
	tool    string // hone's executable under the cache program's name
	goCache string // the trusted Go build cache of this isolation mode
	// scratch is the size of every tmpfs of the run's jails: room for a
	// private copy of the larger checkout, the same for every command.
	scratch int64
	// UserCreated reports that a jail of this run created the jail user.
	UserCreated bool
}

// Start makes a run folder for one verdict ("verdict"), profile or
// calibration of t, after sweeping what dead hones left. With keep the
// folder outlives the run. When sb asks for the full jail and it cannot run
// here, Start fails with a *NoJailError before anything is made.
func Start(ctx context.Context, r *repo.Repo, t *workspace.Target, sb workspace.SandboxConfig, kind string, keep bool) (*Run, error) {
	if sb.Isolation != workspace.IsolationWeak {
		if err := jail.Check(sb.Network); err != nil {
			return nil, &NoJailError{err}
		}
	}
	sweepLegacy(ctx, r)
	// What dead hones' jails left running goes with their folders: a
	// sleeping jail holds its namespaces and mounts (see jail.KillLeftovers).
	if _, err := jail.KillLeftovers(); err != nil {
		return nil, err
	}
	d, err := scratch.New(ctx, r.StatePath(repo.RunsArea), kind+"-"+time.Now().UTC().Format("20060102-150405")+"-")
	if err != nil {
		return nil, err
	}
	run := &Run{repo: r, dir: d, target: t, sandbox: sb, keep: keep, owner: account{-1, -1}, scratch: jail.DefaultScratch}
	if os.Geteuid() == 0 {
		run.owner = account{0, 0}
	}
	if err := run.prepare(); err != nil {
		d.Remove()
		return nil, err
	}
	if keep {
		if err := d.Keep(); err != nil {
			d.Remove()
			return nil, err
		}
	}
	return run, nil
}

// cacheDir holds the build cache under hone's state directory.
const cacheDir = "build-cache"

func (r *Run) prepare() error {
	r.empty = filepath.Join(r.dir.Path, "empty")
	if err := os.Mkdir(r.empty, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", r.empty)
	}
	exe, err := os.Executable()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot find hone's own executable")
	}
	// The cache program is hone under another name: jail.Mount opens the
	// link to bind the executable, and in weak mode the command runs it
	// by this path, so both see the name.
	r.tool = filepath.Join(r.dir.Path, "bin", goCacheProgName)
	if err := os.Mkdir(filepath.Dir(r.tool), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(r.tool))
	}
	if err := os.Symlink(exe, r.tool); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot link %s", r.tool)
	}
	gc, err := r.repo.StateDir(GoCacheName(r.sandbox.Isolation))
	if err != nil {
		return err
	}
	r.goCache = gc
	return nil
}

// GoCacheName is the name, in a repository's state directory, of the
// trusted Go build cache that baseline builds of an isolation fill.
func GoCacheName(isolation string) string {
	if isolation == workspace.IsolationWeak {
		return "gocache-weak"
	}
	return "gocache-full"
}

// Dir is the run folder.
func (r *Run) Dir() string { return r.dir.Path }

// Close removes the run folder, unless it is kept; then it only gives it up.
//
// A folder that cannot be removed loses nothing (what the run recorded
// stands, and hone gc removes it later), but the caller must say so:
// CloseWarning turns the error into the warning to show.
func (r *Run) Close() error {
	if r.keep {
		r.dir.Release()
		return nil
	}
	return r.dir.Remove()
}

// CloseWarning closes r and tells warn when its folder stays behind.
func (r *Run) CloseWarning(warn func(errs.Warning)) {
	if err := r.Close(); err != nil && warn != nil {
		warn(errs.Warning{Code: "run_folder_left", Message: errs.Clip(err.Error()) + "; `hone gc` removes it"})
	}
}

func (r *Run) cache() cache { return cache{dir: r.repo.StatePath(cacheDir)} }

// note records what a jail reported that concerns the whole run.
func (r *Run) note(res *jail.Result) {
	if res != nil && res.UserCreated {
		r.UserCreated = true
	}
}
