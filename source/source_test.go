package source

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/gitpath"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

// fixture is a workspace whose target "a" is pinned to a commit, after which
// the working tree changes: the view must show the pin, not the files.
func fixture(t *testing.T) *workspace.Workspace {
	t.Helper()
	dir := t.TempDir()
	testgit.Git(t, dir, "init", "-q", "-b", "main")
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "%d\n", i)
	}
	testgit.WriteFiles(t, dir, map[string]string{
		"hone.toml":            "[targets.a]\npin = \"v1\"\n\n[targets.gone]\npath = \"targets/missing\"\n\n[targets.linked]\npath = \"alias\"\n",
		"targets/a/main.c":     "line 1\nline 2\nline 3\n",
		"targets/a/noeol.txt":  "one\ntwo",
		"targets/a/empty.txt":  "",
		"targets/a/src/util.c": "int util;\n",
		"targets/a/blob.bin":   "PK\x00\x01binary",
		"targets/a/long.txt":   strings.Repeat("x", MaxLineBytes+10) + "\nshort\n",
		"targets/a/many.txt":   many.String(),
		"secret.txt":           "outside the target\n",
	})
	if err := os.Symlink("../../secret.txt", filepath.Join(dir, "targets/a/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../..", filepath.Join(dir, "targets/a/up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("targets/a", filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "targets/a/main.c"), 0o755); err != nil {
		t.Fatal(err)
	}
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-q", "-m", "pin")
	testgit.Git(t, dir, "tag", "v1")
	testgit.WriteFiles(t, dir, map[string]string{
		"targets/a/main.c": "changed after the pin\n",
		"targets/a/new.c":  "not at the pin\n",
	})
	testgit.Git(t, dir, "commit", "-q", "-am", "later")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestReadFile(t *testing.T) {
	ws := fixture(t)
	ctx := context.Background()
	tests := []struct {
		name, path    string
		offset, limit int
		total         int
		first, last   string
		shown         int
		truncated     bool
	}{
		{"whole file at the pin", "main.c", 0, 0, 3, "line 1", "line 3", 3, false},
		{"dot and slashes", "./main.c", 0, 0, 3, "line 1", "line 3", 3, false},
		{"offset and limit", "main.c", 2, 1, 3, "line 2", "line 2", 1, true},
		{"offset past the end", "main.c", 10, 0, 3, "", "", 0, false},
		{"no newline at end", "noeol.txt", 0, 0, 2, "one", "two", 2, false},
		{"empty", "empty.txt", 0, 0, 0, "", "", 0, false},
		{"default limit", "many.txt", 0, 0, 2500, "1", "2000", 2000, true},
		{"second page", "many.txt", 2001, 0, 2500, "2001", "2500", 500, false},
		{"nested", "src/util.c", 0, 0, 1, "int util;", "int util;", 1, false},
		{"repository-relative, as profile show prints it", "targets/a/main.c", 0, 0, 3, "line 1", "line 3", 3, false},
		{"repository-relative and nested", "./targets/a/src/util.c", 0, 0, 1, "int util;", "int util;", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Read(ctx, ws, "a", tt.path, tt.offset, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if v.Type != File || v.TotalLines != tt.total || len(v.Lines) != tt.shown || v.Truncated != tt.truncated {
				t.Fatalf("view = type %s total %d shown %d truncated %v", v.Type, v.TotalLines, len(v.Lines), v.Truncated)
			}
			if tt.shown > 0 && (v.Lines[0].Text != tt.first || v.Lines[len(v.Lines)-1].Text != tt.last) {
				t.Errorf("lines %q .. %q, want %q .. %q", v.Lines[0].Text, v.Lines[len(v.Lines)-1].Text, tt.first, tt.last)
			}
			if tt.shown > 0 && v.Lines[0].Number != max(tt.offset, 1) {
				t.Errorf("first line number %d", v.Lines[0].Number)
			}
			if v.Truncated && v.NextOffset != v.Lines[len(v.Lines)-1].Number+1 {
				t.Errorf("next_offset %d", v.NextOffset)
			}
		})
	}
}

// A path in the repository-relative form names the same file as its
// target-relative form, and the view says where it is both ways.
func TestReadRepositoryRelativePath(t *testing.T) {
	ws := fixture(t)
	v, err := Read(context.Background(), ws, "a", "targets/a/src/util.c", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Path != "src/util.c" || v.RepoPath != "targets/a/src/util.c" {
		t.Errorf("path %q, repo_path %q", v.Path, v.RepoPath)
	}
	if v, err := Read(context.Background(), ws, "a", "targets/a", 0, 0); err != nil || v.Type != Dir || v.Path != "." {
		t.Errorf("the target's own path: %+v, %v", v, err)
	}
	if _, err := Read(context.Background(), ws, "a", "targets/a/link", 0, 0); err != nil {
		t.Errorf("a symlink named repository-relative: %v", err)
	}
	if _, err := Read(context.Background(), ws, "a", "secret.txt", 0, 0); !errs.Is(err, errs.NotFound) {
		t.Errorf("a file outside the target: %v, want not found", err)
	}

	// Where a path exists inside the target, it means that path.
	dir := testgit.NewRepo(t, map[string]string{
		"hone.toml":           "[targets.s]\npath = \"src\"\n",
		"src/main.c":          "top\n",
		"src/src/main.c":      "nested\n",
		"src/src/only-here.c": "nested only\n",
	})
	ws2, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"src/main.c": "nested", "main.c": "top", "src/only-here.c": "nested only"} {
		v, err := Read(context.Background(), ws2, "s", p, 0, 0)
		if err != nil || len(v.Lines) != 1 || v.Lines[0].Text != want {
			t.Errorf("Read(%q) = %+v, %v; want %q", p, v, err, want)
		}
	}
}

func TestReadSpecial(t *testing.T) {
	ws := fixture(t)
	ctx := context.Background()

	v, err := Read(ctx, ws, "a", "blob.bin", 0, 0)
	if err != nil || !v.Binary || len(v.Lines) != 0 || v.Size != 10 {
		t.Errorf("binary: %+v, %v", v, err)
	}
	v, err = Read(ctx, ws, "a", "long.txt", 0, 0)
	if err != nil || !v.Lines[0].Cut || len(v.Lines[0].Text) != MaxLineBytes || v.Lines[1].Text != "short" || v.Lines[1].Cut {
		t.Errorf("long line: %v", err)
	}
	v, err = Read(ctx, ws, "a", "link", 0, 0)
	if err != nil || v.Type != Symlink || v.LinkTarget != "../../secret.txt" || len(v.Lines) != 0 {
		t.Errorf("symlink: %+v, %v", v, err)
	}
	for _, root := range []string{"", ".", "/"[1:], "./"} {
		v, err = Read(ctx, ws, "a", root, 0, 0)
		if err != nil || v.Type != Dir || v.Path != "." || v.RepoPath != "targets/a" {
			t.Fatalf("root %q: %+v, %v", root, v, err)
		}
	}
	got := map[string]Entry{}
	for _, e := range v.Entries {
		got[e.Name] = e
	}
	if len(got) != 9 || got["main.c"] != (Entry{"main.c", File, 21, true}) || got["src"].Type != Dir || got["link"].Type != Symlink || got["new.c"].Name != "" {
		t.Errorf("entries at the pin: %+v", v.Entries)
	}
}

func TestReadErrors(t *testing.T) {
	ws := fixture(t)
	tests := []struct {
		name, target, path string
		offset             int
		code               errs.Code
		msg                string
	}{
		{"unknown target", "nope", "", 0, errs.NotFound, "known targets"},
		{"absent at the pin", "a", "new.c", 0, errs.NotFound, "new.c does not exist in target \"a\" at pin v1"},
		{"absent nested", "a", "src/none/x.c", 0, errs.NotFound, "src/none does not exist"},
		{"file used as dir", "a", "main.c/x", 0, errs.NotFound, "main.c/x does not exist"},
		{"target path absent", "gone", "", 0, errs.NotFound, "its path \"targets/missing\" does not exist"},
		{"target path is a symlink", "linked", "", 0, errs.Invalid, "not a directory"},
		{"absolute", "a", "/etc/passwd", 0, errs.Policy, "absolute"},
		{"dotdot", "a", "../../secret.txt", 0, errs.Policy, "'..'"},
		{"dotdot inside", "a", "src/../main.c", 0, errs.Policy, "'..'"},
		{"through a symlink", "a", "up/secret.txt", 0, errs.Policy, "up is a symlink"},
		{".git", "a", ".git/config", 0, errs.Policy, "git's own directory"},
		{".GIT", "a", ".GIT", 0, errs.Policy, "git's own directory"},
		{".git.", "a", "src/.git./HEAD", 0, errs.Policy, "git's own directory"},
		{".git space", "a", ".git /x", 0, errs.Policy, "git's own directory"},
		{"git~1", "a", "GIT~1/config", 0, errs.Policy, "git's own directory"},
		{"ntfs stream", "a", ".git::$INDEX_ALLOCATION/x", 0, errs.Policy, "git's own directory"},
		{"hfs ignorable", "a", ".g\u200cit/config", 0, errs.Policy, "git's own directory"},
		{"backslash", "a", "..\\x", 0, errs.Policy, "backslash"},
		{"negative offset", "a", "main.c", -1, errs.Usage, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(context.Background(), ws, tt.target, tt.path, tt.offset, 0)
			if errs.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v (code %d), want code %d containing %q", err, errs.CodeOf(err), tt.code, tt.msg)
			}
		})
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"", "a/b", "../x", ".git", "a/.GIT./b", "git~1", "/abs", "a//b/./c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		parts, err := cleanPath(p)
		if err != nil {
			return
		}
		for _, seg := range parts {
			if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\\x00") || gitpath.IsDotGit(seg) {
				t.Fatalf("cleanPath(%q) kept %q", p, seg)
			}
		}
	})
}

// JSON: a text file always has total_lines and truncated (even 0 and false);
// a directory has neither; source text is not HTML-escaped.
func TestViewJSON(t *testing.T) {
	ws := fixture(t)
	ctx := context.Background()
	for _, tt := range []struct {
		path       string
		want, none []string
	}{
		{"empty.txt", []string{`"total_lines":0`, `"truncated":false`, `"type":"file"`}, []string{`"entries"`}},
		{"main.c", []string{`"total_lines":3`, `"text":"line 1"`}, []string{`"next_offset"`}},
		{"src", []string{`"entries":[{"name":"util.c","type":"file","size":10}]`}, []string{`total_lines`, `truncated`}},
		{"blob.bin", []string{`"binary":true`}, []string{`total_lines`, `"lines"`}},
	} {
		v, err := Read(ctx, ws, "a", tt.path, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: %s lacks %s", tt.path, b, w)
			}
		}
		for _, w := range tt.none {
			if strings.Contains(string(b), w) {
				t.Errorf("%s: %s has %s", tt.path, b, w)
			}
		}
	}
}
