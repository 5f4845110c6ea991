package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/testbuild"
)

func TestHelperNameIsTheJails(t *testing.T) {
	if helperName != jail.HelperName {
		t.Errorf("helperName %q, jail.HelperName %q", helperName, jail.HelperName)
	}
}

// Test processes that ask for hone at once get one binary, and a later ask
// finds it rather than linking it again.
func TestHoneIsBuiltOnceAndShared(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hone")
	}
	var wg sync.WaitGroup
	paths := make([]string, 3)
	errs := make([]error, 3)
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = build(testbuild.Tag) })
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil || paths[i] != paths[0] {
			t.Fatalf("build %d: %q, %v; want %q", i, paths[i], errs[i], paths[0])
		}
	}
	before, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	again, err := build(testbuild.Tag)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(again)
	if err != nil {
		t.Fatal(err)
	}
	if again != paths[0] || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("a second ask built hone again: %s (%v) after %s (%v)", again, after.ModTime(), paths[0], before.ModTime())
	}
	out, err := exec.Command(filepath.Join(filepath.Dir(again), helperName), "id").Output()
	if err != nil || strings.TrimSpace(string(out)) != jail.ImplementationID() {
		t.Errorf("the jail's helper beside hone says %q, %v; want this jail's ID %s", out, err, jail.ImplementationID())
	}
	if fi, err := os.Stat(filepath.Dir(again)); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("the binary's folder: %v, %v; want 0755 so other accounts can run it", fi.Mode(), err)
	}
}

// The shared folder is in a world-writable one: a folder anyone else made
// there, or one others may write, is refused rather than run from.
func TestOwnDirRefusesAFolderOthersControl(t *testing.T) {
	dir := t.TempDir()
	if got, err := ownDir(filepath.Join(dir, "fresh")); err != nil || got != filepath.Join(dir, "fresh") {
		t.Fatalf("a fresh folder: %q, %v", got, err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := ownDir(open); err == nil {
		t.Error("a folder anyone may write was accepted")
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "fresh"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := ownDir(link); err == nil {
		t.Error("a symbolic link was accepted")
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(dir, "theirs")
		if err := os.Mkdir(theirs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := ownDir(theirs); err == nil {
			t.Error("another account's folder was accepted")
		}
	}
}

// Builds nobody asked for in a day go, with their lock files and folders
// of builds that died; the current key's and fresh ones stay.
func TestPruneRemovesOnlyOldBuilds(t *testing.T) {
	base := t.TempDir()
	old := time.Now().Add(-2 * keep)
	for name, stale := range map[string]bool{
		"current": true, "current.lock": true, "fresh": false, "gone": true, "gone.lock": true, "dead.tmp-1": true,
	} {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if stale {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	prune(base, "current")
	for name, want := range map[string]bool{
		"current": true, "current.lock": true, "fresh": true, "gone": false, "gone.lock": false, "dead.tmp-1": false,
	} {
		if _, err := os.Stat(filepath.Join(base, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}
