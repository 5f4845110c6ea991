package allowlist

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/git"
)

func TestAllowlistRule(t *testing.T) {
	a := Rules{Root: "targets/t", Protect: []string{"testdata/**", "**/*_test.go", "go.sum", "gen"}}
	for _, c := range []struct {
		path  string
		allow bool
	}{
		{"targets/t/lib.go", true},
		{"targets/t/dir/deep/x.c", true},
		{"targets/t/café.txt", true},
		{"targets/t/with space.txt", true},
		{"targets/t/generate.go", true},
		{"targets/t", false},
		{"targets/t2/x.go", false},
		{"targets/tt", false},
		{"Targets/t/lib.go", false},
		{"targets/t/testdata/a/b", false},
		{"targets/t/testdata", false},
		{"targets/t/TESTDATA/x", false},
		{"targets/t/lib_test.go", false},
		{"targets/t/a/b/c_test.go", false},
		{"targets/t/go.sum", false},
		{"targets/t/gen/x.go", false},
		{"targets/t/.git/config", false},
		{"targets/t/.Git/config", false},
		{"targets/t/git~1/config", false},
		{"targets/t/gitmod~12.txt", false},
		{"targets/t/.gitattributes", false},
		{"targets/t/\u200c.git/x", false},
		{"targets/t/x\x01", false},
		{"targets/t//x", false},
		{"targets/t/./x", false},
		{"targets/t/../t2/x", false},
		{"/targets/t/x", false},
		{"targets/t/x ", false},
		{"targets/t/x.", false},
		{"targets/t/a:b", false},
		{"targets/t/a\\b", false},
		{"targets/t/\xff", false},
	} {
		if got := a.Rule(c.path) == ""; got != c.allow {
			t.Errorf("%q: allowed=%v, want %v (rule %q)", c.path, got, c.allow, a.Rule(c.path))
		}
	}
}

// The issue's own case: only json.c and json.h may change, no new file may
// appear, and protect still applies on top of files.
func TestFilesAllowOnlyWhatTheyName(t *testing.T) {
	a := Rules{Root: "lib", Files: []string{"json.c", "json.h", "src/**", "gen/*.c"}, Protect: []string{"src/golden/**"}}
	for _, c := range []struct {
		path  string
		allow bool
	}{
		{"lib/json.c", true},
		{"lib/json.h", true},
		{"lib/src/a.c", true},
		{"lib/src/deep/er/b.c", true},
		{"lib/gen/x.c", true},
		{"lib/json.cc", false},
		{"lib/new.c", false},
		{"lib/JSON.c", false},
		{"lib/sub/json.c", false},
		{"lib/gen/x.h", false},
		{"lib/gen/d/x.c", false},
		{"lib/src/golden/out.txt", false},
		{"lib/src/GOLDEN/out.txt", false},
		{"lib/Makefile", false},
		{"json.c", false},
	} {
		if got := a.Rule(c.path) == ""; got != c.allow {
			t.Errorf("%q: allowed=%v, want %v (rule %q)", c.path, got, c.allow, a.Rule(c.path))
		}
	}
	if rule := a.Rule("lib/new.c"); rule != `not among the target's files ("json.c", "json.h", "src/**", "gen/*.c")` {
		t.Errorf("rule for an unlisted file: %q", rule)
	}
}

func TestChangeRule(t *testing.T) {
	a := Rules{Root: "t"}
	for _, c := range []struct {
		change git.Change
		rule   string
	}{
		{git.Change{Path: "t/a.c", OldMode: ModeFile, NewMode: ModeExecutable}, ""},
		{git.Change{Path: "t/a.c", OldMode: ModeFile, NewMode: ModeNone, Binary: true}, ""},
		{git.Change{Path: "t/a.c", OldMode: ModeNone, NewMode: ModeFile, Binary: true}, "binary content is not accepted"},
		{git.Change{Path: "t/l", OldMode: ModeNone, NewMode: ModeSymlink}, "symlinks (mode 120000) are not accepted"},
		{git.Change{Path: "t/s", OldMode: ModeGitlink, NewMode: ModeNone}, "gitlinks (mode 160000, submodules) are not accepted"},
		{git.Change{Path: "t/x", OldMode: ModeFile, NewMode: 0o100664}, "mode 100664 is not accepted (only 100644 and 100755)"},
		{git.Change{Path: "u/a.c", OldMode: ModeFile, NewMode: ModeFile}, "outside the target's path t/"},
	} {
		if got := a.ChangeRule(c.change); got != c.rule {
			t.Errorf("%+v: rule %q, want %q", c.change, got, c.rule)
		}
	}
}

func TestUnlisted(t *testing.T) {
	a := Rules{Root: "lib", Files: []string{"json.c", "src/**", "json.hh", "src"}}
	got := a.Unlisted([]string{"lib/json.c", "lib/json.h", "lib/src/a.c", "json.hh"})
	if strings.Join(got, " ") != "json.hh src" {
		t.Errorf("Unlisted = %q; want the globs naming nothing: json.hh (only outside the root) and src (a directory, not a file)", got)
	}
}

func TestCheckPattern(t *testing.T) {
	for _, c := range []struct {
		pat  string
		want string // "" when valid, else a substring of the error
	}{
		{"json.c", ""},
		{"dir/**", ""},
		{"**/*_test.go", ""},
		{"testdata/", ""},
		{"[a-c]?.h", ""},
		{"", "empty pattern"},
		{"!json.c", "negation is not supported; list the files to allow in `files`"},
		{"/etc/passwd", "absolute"},
		{"../x", "'..' is not allowed"},
		{"a/../b", "'..' is not allowed"},
		{"a//b", "empty path segment"},
		{"**.c", "** inside a segment"},
		{"dir/a**", "** inside a segment"},
		{"[", "not a valid glob"},
		{"a/b[/c", "not a valid glob"},
		{`x\`, "not a valid glob"},
	} {
		err := CheckPattern(c.pat)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckPattern(%q) = %v; want %q", c.pat, err, c.want)
		}
	}
}

// The library at the top level: only json.c and json.h may
// change; the tests, the build files, the workflows and hone's own files
// never, whatever the globs say.
func TestTopLevelTargetChangesOnlyItsFiles(t *testing.T) {
	a := Rules{Root: ".", Files: []string{"json.c", "json.h"}}
	greedy := Rules{Root: ".", Files: []string{"*", "**", ".hone/**", "*.toml"}}
	for _, c := range []struct {
		path         string
		allow, greed bool
	}{
		{"json.c", true, true},
		{"json.h", true, true},
		{"tests/parse.c", false, true},
		{"CMakeLists.txt", false, true},
		{"json_extra.c", false, true},
		{"hone.toml", false, false},
		{"HONE.TOML", false, false},
		{".hone/allowed_signers", false, false},
		{".HONE/x", false, false},
		{".gitignore", false, false},
		{".github/workflows/ci.yml", false, false},
		{".git/config", false, false},
		{"sub/hone.toml", false, true},
		{".", false, false},
		{"", false, false},
	} {
		if got := a.Rule(c.path) == ""; got != c.allow {
			t.Errorf("files json.c, json.h: %q: allowed=%v, want %v (rule %q)", c.path, got, c.allow, a.Rule(c.path))
		}
		if got := greedy.Rule(c.path) == ""; got != c.greed {
			t.Errorf("files \"*\", \"**\": %q: allowed=%v, want %v (rule %q)", c.path, got, c.greed, greedy.Rule(c.path))
		}
	}
	if got := a.Unlisted([]string{"json.c", "tests/json.h"}); len(got) != 1 || got[0] != "json.h" {
		t.Errorf("Unlisted = %q, want json.h alone", got)
	}
}
