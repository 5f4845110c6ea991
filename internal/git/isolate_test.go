package git_test

import (
	"context"
	"github.com/hone-perf/hone/internal/git"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
)

// plantDrivers writes what an agent with a shell in the repository could:
// filter, diff and merge drivers, a hooks folder, an fsmonitor and an
// attributes line that sends every file through them. Each program appends
// its name to the returned marker file.
func plantDrivers(t *testing.T, dir string) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ran")
	evil := filepath.Join(t.TempDir(), "evil")
	script := "#!/bin/sh\necho \"$0 $*\" >> " + marker + "\ncat\n"
	if err := os.WriteFile(evil, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(t.TempDir(), "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\necho hook "+h+" >> "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range [][2]string{
		{"filter.Evil.clean", evil + " clean"}, {"filter.Evil.smudge", evil + " smudge"}, {"filter.Evil.required", "true"},
		{"filter.proc.process", evil + " process"},
		{"diff.Evil.textconv", evil + " textconv"}, {"diff.Evil.command", evil + " command"},
		{"merge.Evil.driver", evil + " merge %O %A %B"},
		{"core.hooksPath", hooks}, {"core.fsmonitor", evil + " fsmonitor"},
	} {
		testgit.Git(t, dir, "config", kv[0], kv[1])
	}
	info := filepath.Join(dir, ".git", "info")
	os.MkdirAll(info, 0o755)
	if err := os.WriteFile(filepath.Join(info, "attributes"), []byte("* filter=Evil diff=Evil merge=Evil\n*.p filter=proc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}

// Each of these calls runs a planted program in a plain git call: the
// clean filter on hashing, the smudge filter and textconv on reading, the
// hooks and the fsmonitor on committing. Isolated, each must still work,
// except an explicit textconv, which fails rather than show anything but
// the file: a driver emptied of its program cannot run it.
var plantedCalls = []struct {
	args  []string
	works bool
}{
	{[]string{"hash-object", "-w", "--path", "a.txt", "a.txt"}, true},
	{[]string{"cat-file", "--filters", "HEAD:a.txt"}, true},
	{[]string{"cat-file", "--textconv", "HEAD:a.txt"}, false},
	{[]string{"add", "a.txt", "b.p"}, true},
	{[]string{"status", "--porcelain"}, true},
	{[]string{"commit", "-q", "-m", "second"}, true},
}

func TestPlantedRepositoryConfigNeverRunsInIsolatedCalls(t *testing.T) {
	testgit.Setenv(t)
	ctx := context.Background()
	for _, isolated := range []bool{false, true} {
		dir := testgit.NewRepo(t, map[string]string{"a.txt": "hello\n"})
		marker := plantDrivers(t, dir)
		testgit.WriteFiles(t, dir, map[string]string{"a.txt": "changed\n", "b.p": "p\n"})
		for _, c := range plantedCalls {
			if _, err := git.Run(ctx, git.Cmd{Dir: dir, Args: c.args, Isolated: isolated}); err != nil && isolated && c.works {
				t.Errorf("isolated git %s: %v", strings.Join(c.args, " "), err)
			}
		}
		ran, _ := os.ReadFile(marker)
		switch {
		case !isolated && len(ran) == 0:
			t.Fatal("the planted drivers did not run even without isolation: the attack is not real")
		case isolated && len(ran) > 0:
			t.Errorf("planted programs ran in isolated calls:\n%s", ran)
		}
	}
}

// Outside any repository there is no configuration to list, and isolated
// calls still work.
func TestIsolatedCallOutsideARepository(t *testing.T) {
	testgit.Setenv(t)
	out, err := git.Run(context.Background(), git.Cmd{Dir: t.TempDir(), Args: []string{"--version"}, Isolated: true})
	if err != nil || !strings.HasPrefix(string(out), "git version") {
		t.Fatalf("git --version: %q, %v", out, err)
	}
}
