package worktree

import (
	"context"
	"strings"
	"testing"
)

// An agent told "you are in a worktree" may take it for a sandbox. Every way
// of entering (create, resume, switch by path, re-enter the same path) must
// say that it is only a directory switch.
func TestEveryEnterSaysItIsNotIsolation(t *testing.T) {
	repo := newRepo(t)
	ctx := context.Background()
	created, err := Enter(ctx, repo, EnterOptions{Name: "a", Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	replies := []*EnterResult{created}
	if _, err := Exit(ctx, repo, ExitOptions{}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Enter(ctx, repo, EnterOptions{Name: "a", Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	same, err := Enter(ctx, repo, EnterOptions{Path: created.WorktreePath, Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	switched, err := Enter(ctx, repo, EnterOptions{Path: repo.Root, Cwd: repo.Root})
	if err != nil {
		t.Fatal(err)
	}
	replies = append(replies, resumed, same, switched)
	for _, r := range replies {
		if !strings.HasSuffix(r.Message, "; "+NotIsolation) || !strings.Contains(NotIsolation, "directory switch, not isolation") {
			t.Errorf("%s enter says %q; want it to end saying it is a directory switch, not isolation", r.Kind, r.Message)
		}
	}
}
