package patch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
)

// FuzzCheck feeds arbitrary diffs to the front check and git's apply. The
// property: whatever is accepted, the resulting tree differs from the pin only
// at paths under the target that no protect pattern covers, and only as plain
// or executable files (the fixture protects testdata/**, **/*_test.go and
// go.sum). The tree comparison is done here from full listings,
// independently of the code under test.
func FuzzCheck(f *testing.F) {
	for _, dir := range []string{"attacks", "legit"} {
		paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.diff"))
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	ws := newFixture(f, fixtureFiles())
	pin := testgit.Git(f, ws.Root, "rev-parse", "main")
	before := flatTree(f, ws.Root, pin)
	f.Fuzz(func(t *testing.T, diff []byte) {
		c, idx, err := check(context.Background(), ws, "t", diff)
		if idx != nil {
			defer idx.close()
		}
		if err != nil {
			return
		}
		// The accepted tree lives in the scratch index until it is stored.
		out, err := idx.git(context.Background(), nil, nil, "ls-tree", "-r", "-z", "--full-tree", c.Tree)
		if err != nil {
			t.Fatal(err)
		}
		after := parseLsTree(string(out))
		changed := map[string]bool{}
		for p, e := range before {
			if after[p] != e {
				changed[p] = true
			}
		}
		for p, e := range after {
			if before[p] != e {
				changed[p] = true
			}
		}
		if len(changed) == 0 {
			t.Fatalf("accepted a diff that changes nothing:\n%q", diff)
		}
		for p := range changed {
			rel, inside := strings.CutPrefix(p, "targets/t/")
			if !inside || strings.HasPrefix(rel, "testdata/") || strings.HasSuffix(rel, "_test.go") || rel == "go.sum" {
				t.Fatalf("accepted a change outside the allowlist: %q\ndiff:\n%q", p, diff)
			}
			if strings.Contains(strings.ToLower(p), ".git") {
				t.Fatalf("accepted a .git path %q\ndiff:\n%q", p, diff)
			}
			if m := after[p].mode; m != "" && m != "100644" && m != "100755" {
				t.Fatalf("accepted mode %s at %q\ndiff:\n%q", m, p, diff)
			}
		}
	})
}
