package git_test

import (
	"context"
	"encoding/json"
	"github.com/hone-perf/hone/internal/git"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
)

// ParseRaw reads what git itself writes: a modified file, a new executable,
// a deletion, a binary file and a name with a space, tab and newline.
func TestParseRawReadsGitsOutput(t *testing.T) {
	dir := testgit.NewRepo(t, map[string]string{"a.c": "int a;\n", "gone.c": "int g;\n"})
	from := testgit.Git(t, dir, "rev-parse", "HEAD")
	testgit.WriteFiles(t, dir, map[string]string{"a.c": "int a = 1;\n", "odd name\t\n.c": "x\n"})
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "rm", "-q", "gone.c")
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-q", "-m", "change")
	out, err := git.Run(context.Background(), git.Cmd{Dir: dir, Args: append(append([]string{"diff-tree"}, git.RawDiffArgs...), "--no-commit-id", from, "HEAD")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := git.ParseRaw(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Hash = ""
	}
	want := []git.Change{
		{Path: "a.c", OldMode: 0o100644, NewMode: 0o100644, Status: "M"},
		{Path: "blob.bin", OldMode: 0, NewMode: 0o100644, Status: "A", Binary: true},
		{Path: "gone.c", OldMode: 0o100644, NewMode: 0, Status: "D"},
		{Path: "odd name\t\n.c", OldMode: 0, NewMode: 0o100644, Status: "A"},
		{Path: "run.sh", OldMode: 0, NewMode: 0o100755, Status: "A"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseRaw =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseRawRefusesWhatGitDoesNotWrite(t *testing.T) {
	for _, out := range []string{":100644 100644 abc\x00a\x00", ":1006x4 100644 a b M\x00a\x00", ":100644 100644 a b M\x00"} {
		if _, err := git.ParseRaw([]byte(out)); err == nil {
			t.Errorf("ParseRaw(%q) accepted it", out)
		}
	}
}

func TestChangeModesAreOctalInJSON(t *testing.T) {
	b, err := json.Marshal(git.Change{Path: "a.c", OldMode: 0o100644, NewMode: 0o100755, Status: "M"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"path":"a.c","status":"M","old_mode":"100644","new_mode":"100755"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
