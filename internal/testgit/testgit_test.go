package testgit

import (
	"os/exec"
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
