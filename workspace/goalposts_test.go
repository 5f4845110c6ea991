package workspace

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/testgit"
)

const judgedToml = "[bench]\nthreshold = 0.02\n[targets.a]\npath = \"targets/a\"\npin = \"main\"\nprotect = [\"testdata/**\"]\n"

// history is main with every kind of earlier pin: commits that changed only
// the target's code, one that changed protected test data, a merged side
// branch, one that changed only files outside the target, and an agent's
// branch that changes hone.toml.
type history struct {
	dir                                          string
	c0, c1, c2, c3, side, merge, c4, loose, docs string
}

func newHistory(t *testing.T) *history {
	h := &history{dir: testgit.NewRepo(t, map[string]string{
		"hone.toml": judgedToml, "targets/a/main.c": "0\n", "targets/a/testdata/in.txt": "v1\n",
	})}
	commit := func(files map[string]string, msg string) string {
		testgit.WriteFiles(t, h.dir, files)
		testgit.Git(t, h.dir, "add", "-A")
		testgit.Git(t, h.dir, "commit", "-qm", msg)
		return testgit.Git(t, h.dir, "rev-parse", "HEAD")
	}
	h.c0 = testgit.Git(t, h.dir, "rev-parse", "HEAD")
	h.c1 = commit(map[string]string{"targets/a/main.c": "1\n"}, "code")
	h.c2 = commit(map[string]string{"targets/a/testdata/in.txt": "v2\n"}, "test data")
	h.c3 = commit(map[string]string{"targets/a/main.c": "3\n"}, "code")
	testgit.Git(t, h.dir, "switch", "-q", "-c", "side")
	h.side = commit(map[string]string{"targets/a/other.c": "side\n"}, "side")
	testgit.Git(t, h.dir, "switch", "-q", "main")
	testgit.Git(t, h.dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")
	h.merge = testgit.Git(t, h.dir, "rev-parse", "HEAD")
	h.c4 = commit(map[string]string{"targets/a/main.c": "4\n"}, "code")
	testgit.Git(t, h.dir, "switch", "-q", "-c", "agent")
	h.loose = commit(map[string]string{"hone.toml": strings.Replace(judgedToml, "0.02", "0.001", 1)}, "an agent's rules")
	testgit.Git(t, h.dir, "switch", "-q", "main")
	h.docs = commit(map[string]string{"docs/notes.md": "outside the target\n"}, "docs")
	return h
}

func (h *history) judge(t *testing.T, pin string) (*Goalposts, error) {
	t.Helper()
	r, err := repo.Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	return Judge(context.Background(), r, "a", pin)
}

// An earlier pin is acceptable only while the goalposts and the target's
// own code are the tip's: main may move on elsewhere (here its docs), but
// a patch at a pin whose code main has since changed would be judged
// against code it would not land on, and credited with main's own work.
func TestJudgeAcceptsOnlyPinsWithTheTipsGoalpostsAndCode(t *testing.T) {
	h := newHistory(t)
	for _, c := range []struct {
		name    string
		pin     string
		differs []string // nil with !moved and !never: accepted
		moved   bool     // refused: the target's code changed since
		never   bool     // refused as never the current pin
	}{
		{name: "the current pin", pin: h.docs},
		{name: "a pin before a change outside the target", pin: h.c4},
		{name: "a pin before main changed the target's code", pin: h.merge, moved: true},
		{name: "an older pin with the same test data", pin: h.c2, moved: true},
		{name: "an older pin with other test data", pin: h.c1, differs: []string{"targets/a/testdata/in.txt"}},
		{name: "the first pin", pin: h.c0, differs: []string{"targets/a/testdata/in.txt"}},
		{name: "a merged side branch", pin: h.side, never: true},
		{name: "an agent's branch", pin: h.loose, never: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := h.judge(t, c.pin)
			var stale *StalePinError
			switch {
			case c.differs == nil && !c.never && !c.moved:
				if err != nil {
					t.Fatal(err)
				}
				if g.Pin != c.pin || g.Current != h.docs || g.PinRef != "refs/heads/main" || g.Commit != h.docs || g.Config.Bench.Threshold != 0.02 {
					t.Fatalf("goalposts %+v", g)
				}
			case !errors.As(err, &stale) || !errs.Is(err, errs.Policy):
				t.Fatalf("want a stale-pin refusal, got %v", err)
			case !reflect.DeepEqual(stale.Differs, c.differs) || stale.CodeMoved != c.moved || stale.Current != h.docs:
				t.Fatalf("differs %v, code moved %v; want %v, %v; current %s", stale.Differs, stale.CodeMoved, c.differs, c.moved, stale.Current)
			case !strings.Contains(err.Error(), "re-propose the patch at the current pin") || strings.Contains(err.Error(), "never the current pin") != c.never ||
				strings.Contains(err.Error(), "the target's own code changed") != c.moved:
				t.Fatalf("message %q", err)
			}
		})
	}
}

// main moves on with a new threshold: every earlier pin now has other
// goalposts, and the message says so.
func TestJudgeRefusesEveryPinBeforeAChangeOfHoneToml(t *testing.T) {
	h := newHistory(t)
	testgit.WriteFiles(t, h.dir, map[string]string{"hone.toml": strings.Replace(judgedToml, "0.02", "0.05", 1)})
	testgit.Git(t, h.dir, "commit", "-qam", "a stricter threshold")
	for _, pin := range []string{h.c4, h.merge, h.c2} {
		_, err := h.judge(t, pin)
		var stale *StalePinError
		if !errors.As(err, &stale) || len(stale.Differs) == 0 || stale.Differs[0] != FileName {
			t.Fatalf("pin %s: %v", pin, err)
		}
	}
}

func TestResolvePinRef(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, judgedToml)
	head := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.Git(t, dir, "tag", "-a", "-m", "v1", "v1")
	testgit.Git(t, dir, "tag", "twice")
	testgit.Git(t, dir, "branch", "twice")
	testgit.Git(t, dir, "branch", head[:12])
	r, err := repo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ pin, ref string }{
		{"main", "refs/heads/main"}, {"HEAD", "refs/heads/main"}, {"refs/heads/main", "refs/heads/main"},
		{"v1", "refs/tags/v1"}, {head, head},
	} {
		ref, commit, err := ResolvePinRef(ctx, r, c.pin)
		if err != nil || ref != c.ref || commit != head {
			t.Errorf("%s: %s %s %v, want %s", c.pin, ref, commit, err, c.ref)
		}
	}
	for _, pin := range []string{"twice", head[:12]} {
		if _, _, err := ResolvePinRef(ctx, r, pin); !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "ambiguous") {
			t.Errorf("%s: want an ambiguous pin, got %v", pin, err)
		}
	}
	for _, pin := range []string{"nope", "refs/remotes/origin/main", "main~1"} {
		if _, _, err := ResolvePinRef(ctx, r, pin); !errors.Is(err, repo.ErrNoCommit) {
			t.Errorf("%s: want no commit, got %v", pin, err)
		}
	}
}

// A target the tip does not define is refused with what to do about it:
// commit it when the working tree defines it, else name one that exists.
func TestUndefinedTargetSaysWhereItIsMissing(t *testing.T) {
	h := newHistory(t)
	ws, err := Open(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.GoalpostsAt(context.Background(), "nosuch", h.docs)
	if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), `unknown target "nosuch": neither the working tree's hone.toml nor the one at the protected tip`) ||
		!strings.Contains(err.Error(), "its targets: a") {
		t.Errorf("a target defined nowhere: %v", err)
	}
	testgit.WriteFiles(t, h.dir, map[string]string{"hone.toml": judgedToml + "[targets.b]\npath = \"targets/a\"\n"})
	if ws, err = Open(h.dir); err != nil {
		t.Fatal(err)
	}
	_, err = ws.GoalpostsAt(context.Background(), "b", h.docs)
	if !errs.Is(err, errs.NotFound) || !strings.Contains(err.Error(), `target "b" is not defined in hone.toml at the protected tip`) || !strings.Contains(err.Error(), "commit the target on refs/heads/main") {
		t.Errorf("a target of the working tree alone: %v", err)
	}
}
