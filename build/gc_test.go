package build

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/internal/tier"
)

// hone gc trims the build cache to its bound, least recently used entry
// first, never touches a live or kept run folder, and says what it freed.
func TestGCTrimsTheCacheOldestFirst(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, cFiles, cTarget)
	old := f.pin
	f.build(f.start(false), Baseline, old)
	recent := f.commit(map[string]string{"targets/t/prog.c": "#include <stdio.h>\nint main(void){puts(\"ho\");return 0;}\n"})
	f.build(f.start(false), Baseline, recent)
	entries := cacheEntries(t, f)
	if len(entries) != 2 {
		t.Fatalf("cache entries %v", entries)
	}
	// Using the old entry makes it the most recent.
	past := time.Now().Add(-time.Hour)
	for _, e := range entries {
		os.Chtimes(e, past, past)
	}
	f.build(f.start(false), Baseline, old)
	live := f.start(false)
	kept := f.start(true)
	kept.Close()

	oneEntry := scratch.Size(entries[0]) + 64<<10
	res, err := GC(context.Background(), f.ws.Repo, oneEntry+scratch.Size(f.ws.StatePath("gocache-full")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cache.Items != 1 || res.Cache.Bytes <= 0 || res.CacheBytes > res.CacheLimit {
		t.Errorf("gc: %+v", res)
	}
	left := cacheEntries(t, f)
	if len(left) != 1 {
		t.Fatalf("left %v", left)
	}
	if s := f.build(f.start(false), Baseline, old); !s.Cached {
		t.Error("gc removed the recently used entry")
	}
	if _, err := os.Stat(live.Dir()); err != nil {
		t.Errorf("gc removed a live run folder: %v", err)
	}
	if len(res.Kept) != 1 || res.Kept[0] != kept.Dir() {
		t.Errorf("kept folders %v, want %s", res.Kept, kept.Dir())
	}
	if _, err := os.Stat(kept.Dir()); err != nil {
		t.Errorf("gc removed a kept run folder: %v", err)
	}
	scratch.RemoveAll(kept.Dir())
}

// Leftovers of older hones (worktrees under checkouts/, throwaway indexes
// in the state folder) go once they are an hour old.
func TestGCSweepsOlderHonesLeftovers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, cFiles, cTarget)
	for _, p := range []string{f.ws.StatePath("checkouts", "20240101-x"), f.ws.StatePath("out", "20240101-x"), f.ws.StatePath("apply-123"), f.ws.StatePath("checkouts", "fresh")} {
		os.MkdirAll(p, 0o755)
		os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o644)
	}
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{f.ws.StatePath("checkouts", "20240101-x"), f.ws.StatePath("out", "20240101-x"), f.ws.StatePath("apply-123")} {
		os.Chtimes(p, past, past)
	}
	res, err := GC(context.Background(), f.ws.Repo, 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	if res.Leftovers.Items != 3 {
		t.Errorf("leftovers %+v, want 3", res.Leftovers)
	}
	if _, err := os.Stat(f.ws.StatePath("checkouts", "fresh")); err != nil {
		t.Errorf("a fresh checkout of an older hone went: %v", err)
	}
}
