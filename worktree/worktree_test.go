package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/workspace"
)

// Helper modes: the test binary re-executes itself so races and dead lock
// holders are real processes, not goroutines.
const (
	helperEnv   = "HONE_WORKTREE_HELPER" // "enter" or "hold"
	helperDir   = "HONE_WORKTREE_HELPER_DIR"
	helperName  = "HONE_WORKTREE_HELPER_NAME"
	helperStart = "HONE_WORKTREE_HELPER_START" // a file to wait for, so processes start together
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "enter":
		for os.Getenv(helperStart) != "" && !exists(os.Getenv(helperStart)) {
			time.Sleep(time.Millisecond)
		}
		dir := os.Getenv(helperDir)
		repo, err := repo.Open(dir)
		if err == nil {
			_, err = Enter(context.Background(), repo, EnterOptions{Name: os.Getenv(helperName), Cwd: dir})
		}
		os.Exit(int(errs.CodeOf(err)))
	case "hold":
		repo, err := repo.Open(os.Getenv(helperDir))
		if err != nil {
			os.Exit(1)
		}
		if _, err := lockSession(repo, "default"); err != nil {
			os.Exit(int(errs.CodeOf(err)))
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newRepo(t testing.TB) *repo.Repo {
	t.Helper()
	testgit.Setenv(t, "HONE_SESSION=")
	repo, err := repo.Open(testgit.NewRepo(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func helper(mode, dir, name, start string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir, helperName+"="+name, helperStart+"="+start)
	return cmd
}

// Several processes race to create a worktree in one session: exactly one
// wins, every loser is refused by the lock (busy) or by the one-session rule
// (policy), and exactly one worktree exists afterwards.
func TestConcurrentEntersHaveExactlyOneWinner(t *testing.T) {
	repo := newRepo(t)
	start := filepath.Join(t.TempDir(), "go")
	var cmds []*exec.Cmd
	for i := range 4 {
		cmd := helper("enter", repo.Root, fmt.Sprintf("racer-%d", i), start)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	codes := map[int]int{}
	for _, cmd := range cmds {
		cmd.Wait()
		codes[cmd.ProcessState.ExitCode()]++
	}
	t.Logf("exit codes of the racers: %v", codes)
	if codes[0] != 1 || codes[0]+codes[int(errs.Busy)]+codes[int(errs.Policy)] != len(cmds) {
		t.Fatalf("exit codes %v: want exactly one 0 and the rest %d or %d", codes, errs.Busy, errs.Policy)
	}
	list, err := List(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].Active {
		t.Fatalf("managed worktrees after the race: %+v; want exactly one, active", list)
	}
}

// A live lock holder makes Enter and Exit fail fast with Busy and change
// nothing; once the holder is killed, the lock it left is recovered.
func TestLockBusyThenRecoveredFromDeadHolder(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	holder := helper("hold", repo.Root, "", "")
	testproc.StartReady(t, holder, "locked")

	_, err := Enter(ctx, repo, EnterOptions{Name: "x", Cwd: repo.Root})
	if !errs.Is(err, errs.Busy) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", holder.Process.Pid)) {
		t.Fatalf("Enter while locked: %v; want busy naming pid %d", err, holder.Process.Pid)
	}
	if exists(managedPath(repo.Root, "x")) {
		t.Fatal("a busy Enter created the worktree")
	}
	if _, err := Exit(ctx, repo, ExitOptions{}); !errs.Is(err, errs.Busy) {
		t.Fatalf("Exit while locked: %v; want busy", err)
	}

	holder.Process.Kill()
	holder.Wait()
	if _, err := Enter(ctx, repo, EnterOptions{Name: "x", Cwd: repo.Root}); err != nil {
		t.Fatalf("Enter after the holder died: %v", err)
	}
}

// enterBound creates managed worktree "bound" for target wordfreq and
// returns the main repository, the config and the worktree's repository.
func enterBound(t *testing.T) (*repo.Repo, *workspace.Config, *EnterResult, *repo.Repo) {
	t.Helper()
	main := newRepo(t)
	cfg := &workspace.Config{Targets: map[string]*workspace.Target{"wordfreq": {Name: "wordfreq"}}}
	res, err := Enter(context.Background(), main, EnterOptions{Name: "bound", Target: "wordfreq", Config: cfg, Cwd: main.Root})
	if err != nil {
		t.Fatal(err)
	}
	inside, err := repo.Open(res.WorktreePath)
	if err != nil {
		t.Fatal(err)
	}
	return main, cfg, res, inside
}

func TestSessionTarget(t *testing.T) {
	ctx := context.Background()
	main, cfg, res, inside := enterBound(t)
	for _, tt := range []struct {
		name    string
		repo    *repo.Repo
		session string
		want    string
		ok      bool
	}{
		{"in the session's worktree", inside, "", "wordfreq", true},
		{"in the session's worktree, another HONE_SESSION", inside, "other", "wordfreq", true},
		{"in the main worktree", main, "", "", false},
	} {
		t.Setenv("HONE_SESSION", tt.session)
		got, ok, err := SessionTarget(tt.repo)
		if err != nil || got != tt.want || ok != tt.ok {
			t.Errorf("%s: SessionTarget = %q, %v, %v; want %q, %v", tt.name, got, ok, err, tt.want, tt.ok)
		}
	}

	// A managed worktree keeps its target: entering it by path for another
	// is refused.
	t.Setenv("HONE_SESSION", "other")
	cfg.Targets["b"] = &workspace.Target{Name: "b"}
	if _, err := Enter(ctx, main, EnterOptions{Path: res.WorktreePath, Target: "b", Config: cfg, Cwd: main.Root}); !errs.Is(err, errs.Policy) {
		t.Fatalf("rebinding a managed worktree by path: %v; want a policy error", err)
	}

	// Two sessions binding one unmanaged worktree to different targets is
	// ambiguous.
	plain := filepath.Join(t.TempDir(), "plain")
	testgit.Git(t, main.Root, "worktree", "add", "-q", "--detach", plain)
	for session, target := range map[string]string{"s1": "wordfreq", "s2": "b"} {
		t.Setenv("HONE_SESSION", session)
		if _, err := Enter(ctx, main, EnterOptions{Path: plain, Target: target, Config: cfg, Cwd: main.Root}); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HONE_SESSION", "third")
	inPlain, err := repo.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := SessionTarget(inPlain); !errs.Is(err, errs.Policy) {
		t.Fatalf("ambiguous binding: %v; want a policy error", err)
	}
}

// The attack of issue 14: deleting hone's session files (even all of
// .git/hone) switched the guard off. A managed worktree's binding is a ref
// they do not hold; with the binding gone too, the worktree is refused.
func TestDeletedSessionStateDoesNotUnbindAWorktree(t *testing.T) {
	main, _, _, inside := enterBound(t)
	if err := os.RemoveAll(main.StatePath()); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := SessionTarget(inside); err != nil || !ok || got != "wordfreq" {
		t.Fatalf("after rm -rf .git/hone: %q %v %v; want still bound to wordfreq", got, ok, err)
	}
	testgit.Git(t, main.Root, "update-ref", "-d", BindingPrefix+"bound")
	if _, _, err := SessionTarget(inside); !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), "no binding to a target") {
		t.Fatalf("with the binding gone too: %v; want a policy refusal", err)
	}
}

// Session state is replaced atomically: no temp files are left behind, and a
// corrupt state file is reported as such rather than treated as no session.
func TestStateFileAtomicAndCorruptionReported(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	if _, err := Enter(ctx, repo, EnterOptions{Name: "s", Cwd: repo.Root}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(sessionsDir(repo))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
	if err := os.WriteFile(sessionFile(repo, "default"), []byte("kind = [broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Exit(ctx, repo, ExitOptions{})
	if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "corrupt worktree state") {
		t.Fatalf("Exit with a corrupt state file: %v; want invalid", err)
	}
	if errors.Is(err, ErrOutsideRepo) {
		t.Fatal("corruption must not look like being outside a repository")
	}
}
