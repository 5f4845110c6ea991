package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/git"
)

// BenchmarkEnter compares Enter with the plain `git worktree add` it wraps, on
// the same 400-file tree, without the cost of starting the hone binary
// (scripts/bench-worktree.sh measures the binary end to end). Read enter/git.
func BenchmarkEnter(b *testing.B) {
	repo := newRepo(b)
	ctx := context.Background()
	for d := range 20 {
		dir := filepath.Join(repo.Root, "src", fmt.Sprint(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 20 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), fmt.Appendf(nil, "package p\n\nconst C%d = %d\n", f, f), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	run := func(args ...string) {
		if _, err := git.Run(ctx, git.Cmd{Dir: repo.Root, Args: args}); err != nil {
			b.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "-q", "-m", "tree")
	// Both are timed in every iteration, alternating which goes first, so a
	// busy machine slows both alike; the ratio is what to read. The benchmark
	// function runs more than once (b.N = 1 first), so names count on.
	var gitTimes, enterTimes []time.Duration
	n := 0
	timeGit := func() {
		branch := fmt.Sprintf("plain-%d", n)
		path := managedPath(repo.Root, branch)
		t0 := time.Now()
		run("worktree", "add", "--quiet", "-b", branch, "--", path, "HEAD")
		gitTimes = append(gitTimes, time.Since(t0))
		run("worktree", "remove", "--force", path)
		run("branch", "-q", "-D", branch)
	}
	timeEnter := func() {
		t0 := time.Now()
		if _, err := Enter(ctx, repo, EnterOptions{Name: fmt.Sprintf("enter-%d", n), Base: "head", Cwd: repo.Root}); err != nil {
			b.Fatal(err)
		}
		enterTimes = append(enterTimes, time.Since(t0))
		if _, err := Exit(ctx, repo, ExitOptions{Action: "remove"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		n++
		if n%2 == 0 {
			timeGit()
			timeEnter()
		} else {
			timeEnter()
			timeGit()
		}
	}
	// Medians, because one checkout stalled by a neighbour's I/O can take ten
	// times the usual and would swamp a mean.
	g, e := median(gitTimes), median(enterTimes)
	b.ReportMetric(float64(g), "git-median-ns")
	b.ReportMetric(float64(e), "enter-median-ns")
	b.ReportMetric(float64(e)/float64(g), "enter/git")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
