package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
)

// legacyAge is how long a leftover of an older hone (checkouts made without
// an owner lock) must have been untouched before it is swept: such a hone
// could still be running.
const legacyAge = time.Hour

// sweepLegacy removes what older hones left: git worktrees under
// checkouts/ with their out/ folders, and throwaway indexes (apply-*)
// directly in the state directory.
func sweepLegacy(ctx context.Context, r *repo.Repo) scratch.Freed {
	var freed scratch.Freed
	var old []string
	for _, d := range []string{"checkouts", "out"} {
		old = append(old, scratch.Old(r.StatePath(d), "", legacyAge)...)
	}
	old = append(old, scratch.Old(r.StatePath(), "apply-", legacyAge)...)
	for _, p := range old {
		n := scratch.Size(p)
		if scratch.RemoveAll(p) == nil {
			freed.Items++
			freed.Bytes += n
		}
	}
	if len(old) > 0 {
		// git still lists the removed worktrees until it prunes them.
		git.Run(ctx, git.Cmd{Dir: r.Root, Args: []string{"worktree", "prune"}, Isolated: true})
	}
	return freed
}

// GCResult is what a collection removed.
type GCResult struct {
	Leftovers scratch.Freed `json:"leftovers"`   // run folders and scratch of dead hones
	Cache     scratch.Freed `json:"build_cache"` // build cache entries trimmed
	// Damaged are cache entries that no longer match their manifest (or
	// have none, as older hones wrote them); they were removed.
	Damaged scratch.Freed `json:"damaged"`
	// CacheBytes is the size of the build cache after trimming, and
	// CacheLimit its bound ([sandbox] cache_size).
	CacheBytes int64 `json:"cache_bytes"`
	CacheLimit int64 `json:"cache_limit"`
	// Kept lists the run folders kept with --keep, which are never removed.
	Kept []string `json:"kept"`
	// Orphans are the processes of dead hones' jails killed (see
	// jail.KillLeftovers).
	Orphans int `json:"orphans"`
}

// GC removes what dead hones left behind (run folders, throwaway indexes,
// older hones' checkouts), checks every build cache entry against its
// manifest, removing those that differ, and trims the build cache, the
// pins' builds and the trusted Go build caches, to limit bytes, least
// recently used first.
func GC(ctx context.Context, r *repo.Repo, limit int64) (*GCResult, error) {
	res := &GCResult{CacheLimit: limit, Kept: scratch.Kept(r.StatePath(repo.RunsArea))}
	for _, area := range repo.ScratchAreas {
		f, err := scratch.Sweep(ctx, r.StatePath(area))
		if err != nil {
			return nil, err
		}
		res.Leftovers.Add(f)
	}
	res.Leftovers.Add(sweepLegacy(ctx, r))
	orphans, err := jail.KillLeftovers()
	if err != nil {
		return nil, err
	}
	res.Orphans = orphans
	damaged, err := removeDamaged(ctx, r)
	if err != nil {
		return nil, err
	}
	res.Damaged = damaged
	freed, size, err := trimCache(ctx, r, limit)
	if err != nil {
		return nil, err
	}
	res.Cache, res.CacheBytes = freed, size
	if res.Kept == nil {
		res.Kept = []string{}
	}
	return res, nil
}

func removeDamaged(ctx context.Context, r *repo.Repo) (scratch.Freed, error) {
	var freed scratch.Freed
	c := cache{dir: r.StatePath(cacheDir)}
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() {
			continue
		}
		dir := filepath.Join(c.dir, e.Name())
		err := c.verify(dir)
		if err == nil {
			continue
		}
		if !errors.Is(err, errMismatch) {
			return freed, errs.Wrap(errs.Failure, err, "build cache: cannot check %s", dir)
		}
		n := scratch.Size(dir)
		if err := c.discard(ctx, dir); err != nil {
			return freed, err
		}
		freed.Items++
		freed.Bytes += n
	}
	return freed, nil
}

// cacheItem is one thing the cache bound counts: a build cache entry, or a
// whole trusted Go build cache.
type cacheItem struct {
	path string
	used time.Time
	size int64
}

func trimCache(ctx context.Context, r *repo.Repo, limit int64) (scratch.Freed, int64, error) {
	var items []cacheItem
	var total int64
	add := func(p string) {
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return
		}
		it := cacheItem{path: p, used: fi.ModTime(), size: scratch.Size(p)}
		items = append(items, it)
		total += it.size
	}
	ents, _ := os.ReadDir(r.StatePath(cacheDir))
	for _, e := range ents {
		// Names with a dot are the lock and entries being stored.
		if !strings.HasPrefix(e.Name(), ".") {
			add(filepath.Join(r.StatePath(cacheDir), e.Name()))
		}
	}
	for _, iso := range []string{"full", "weak"} {
		add(r.StatePath(GoCacheName(iso)))
	}
	var freed scratch.Freed
	if total <= limit {
		return freed, total, nil
	}
	held, err := cache{dir: r.StatePath(cacheDir)}.lock(ctx)
	if err != nil {
		return freed, total, err
	}
	defer held.Release()
	sort.Slice(items, func(i, j int) bool { return items[i].used.Before(items[j].used) })
	for _, it := range items {
		if total <= limit {
			break
		}
		if err := scratch.RemoveAll(it.path); err != nil {
			return freed, total, errs.Wrap(errs.Failure, err, "cannot remove %s", it.path)
		}
		freed.Items++
		freed.Bytes += it.size
		total -= it.size
	}
	return freed, total, nil
}
