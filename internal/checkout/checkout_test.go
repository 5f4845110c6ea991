package checkout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

func sh(t *testing.T, dir, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newWorkspace makes a repository with one C target whose build counts its
// own runs in a file outside the repository, so tests can see cache hits.
func newWorkspace(t *testing.T, build string) (*workspace.Workspace, string) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{
		"targets/hello/hello.c": "#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n",
		"hone.toml":             "[targets.hello]\nbuild = '''" + build + "'''\n[targets.hello.bench]\nrun = \"$HONE_OUT/hello\"\n",
	})
	pin := testgit.Git(t, dir, "rev-parse", "HEAD")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws, pin
}

func TestCheckoutBuildAndCache(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "builds")
	ws, pin := newWorkspace(t, "echo x >> "+counter+" && cc -O2 -o $HONE_OUT/hello hello.c")
	ctx := context.Background()
	tgt, _ := ws.Target("hello")

	co, err := New(ctx, ws.Repo, pin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(co.TargetDir(tgt), "hello.c")); err != nil {
		t.Fatal("checkout lacks the target's source:", err)
	}
	b, err := Build(ctx, ws, tgt, co, true)
	if err != nil || !b.OK() || b.Cached {
		t.Fatalf("first build: %+v, %v", b, err)
	}
	if out := sh(t, co.Dir, b.Out+"/hello"); out != "hi" {
		t.Errorf("built program printed %q", out)
	}
	b2, err := Build(ctx, ws, tgt, co, true)
	if err != nil || !b2.Cached || b2.Out != b.Out {
		t.Fatalf("second build on the same pin was not reused: %+v, %v", b2, err)
	}
	tgt.Build += " # changed"
	b3, err := Build(ctx, ws, tgt, co, true)
	if err != nil || b3.Cached || b3.Key == b.Key {
		t.Fatalf("a changed build command reused the cache: %+v, %v", b3, err)
	}
	if n := len(strings.Fields(sh(t, "/", "cat "+counter))); n != 2 {
		t.Errorf("build ran %d times, want 2", n)
	}

	if err := co.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(co.Dir); !os.IsNotExist(err) {
		t.Errorf("checkout still exists: %v", err)
	}
	if list := sh(t, ws.Root, "git worktree list"); strings.Contains(list, co.Dir) {
		t.Errorf("worktree still registered:\n%s", list)
	}
}

func TestFailedBuildIsNotCached(t *testing.T) {
	ws, pin := newWorkspace(t, "cc -O2 -o $HONE_OUT/hello missing.c")
	ctx := context.Background()
	tgt, _ := ws.Target("hello")
	co, err := New(ctx, ws.Repo, pin)
	if err != nil {
		t.Fatal(err)
	}
	defer co.Remove(ctx)
	b, err := Build(ctx, ws, tgt, co, true)
	if err != nil || b.OK() {
		t.Fatalf("broken build: %+v, %v", b, err)
	}
	if ents, _ := os.ReadDir(ws.StatePath("build-cache")); len(ents) != 0 {
		t.Errorf("build cache holds %d entries after a failed build", len(ents))
	}
}

func TestNewUnknownCommit(t *testing.T) {
	ws, _ := newWorkspace(t, "true")
	if _, err := New(context.Background(), ws.Repo, strings.Repeat("ab", 20)); err == nil {
		t.Fatal("checkout of a missing commit succeeded")
	}
}

// A hone stuck while holding the checkout lock (here: this test holding it)
// cannot make a verdict wait forever: New gives up at its deadline, busy,
// and leaves no worktree behind.
func TestCheckoutGivesUpBehindAStuckLockHolder(t *testing.T) {
	ws, pin := newWorkspace(t, "true")
	held, err := lock.Acquire(context.Background(), ws.StatePath("checkouts.lock"), "hold the checkouts")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if co, err := New(ctx, ws.Repo, pin); errs.CodeOf(err) != errs.Busy {
		t.Fatalf("New behind a held lock: %+v, %v; want busy", co, err)
	}
	if ents, _ := os.ReadDir(ws.StatePath("checkouts")); len(ents) != 0 {
		t.Errorf("a busy New left %d checkouts", len(ents))
	}
}
