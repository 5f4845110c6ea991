package testgit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewRepo(t *testing.T) {
	dir := NewRepo(t, map[string]string{"a/b.txt": "b\n"})
	if got := Git(t, dir, "show", "main:a/b.txt"); got != "b" {
		t.Errorf("a/b.txt at main: %q", got)
	}
	if got := Git(t, dir, "log", "-1", "--format=%an <%ae> %cn <%ce>"); got != "hone test <test@hone.invalid> hone test <test@hone.invalid>" {
		t.Errorf("identity %q", got)
	}
	if got, want := (Cmd{Dir: dir, Stdin: "b\n"}).Git(t, "hash-object", "--stdin"), Git(t, dir, "rev-parse", "main:a/b.txt"); got != want {
		t.Errorf("hash-object --stdin: %s, want %s", got, want)
	}
}

// TestOnlyTestsImport keeps testgit out of hone's binaries: no package may
// import it outside its _test.go files.
func TestOnlyTestsImport(t *testing.T) {
	const self = "github.com/hone-perf/hone/internal/testgit"
	out, err := exec.Command("go", "list", "-f", `{{range .Imports}}{{if eq . "`+self+`"}}{{$.ImportPath}} {{end}}{{end}}`, "github.com/hone-perf/hone/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if importers := strings.TrimSpace(string(out)); importers != "" {
		t.Errorf("non-test code imports testgit: %s", importers)
	}
}

// TestRunFromAGitHookLeavesTheOuterRepositoryAlone runs a test in a child
// test binary started the way `git rebase --exec` or a hook starts it, with
// GIT_DIR naming an outer repository: the test's own repository must be made
// in its temporary directory, and the outer one must not change.
func TestRunFromAGitHookLeavesTheOuterRepositoryAlone(t *testing.T) {
	if os.Getenv("TESTGIT_CHILD") != "" {
		NewRepo(t, map[string]string{"x.txt": "x\n"})
		return
	}
	outer := NewRepo(t, map[string]string{"outer.txt": "o\n"})
	before := Git(t, outer, "for-each-ref")
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunFromAGitHookLeavesTheOuterRepositoryAlone$")
	cmd.Env = append(os.Environ(), "TESTGIT_CHILD=1", "GIT_DIR="+filepath.Join(outer, ".git"), "GIT_WORK_TREE="+outer)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child test: %v\n%s", err, out)
	}
	if after := Git(t, outer, "for-each-ref"); after != before {
		t.Errorf("the outer repository's refs changed:\nbefore %s\nafter  %s", before, after)
	}
	if bare := Git(t, outer, "config", "core.bare"); bare != "false" {
		t.Errorf("the outer repository became bare: core.bare = %s", bare)
	}
}
