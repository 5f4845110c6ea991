package allowlist

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hone-perf/hone/internal/gitpath"
)

// FuzzCheckName: whatever name the rules accept is relative, valid UTF-8,
// free of control characters and separators other filesystems read, and has
// no component any filesystem could take for .git or any .git* file,
// checked here independently of the rules' own code.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"targets/t/a.c", ".git/config", "t/GIT~1/x", "t/.git./x", "t/\u200c.git/x", "t/a:b", "t/x ", "a//b", "caf\u00e9", "t/.gitmodules", "x~12.txt", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckName(name) != "" {
			return
		}
		if !utf8.ValidString(name) || strings.HasPrefix(name, "/") || strings.ContainsAny(name, "\\:") {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if r < 0x20 || r == 0x7f || gitpath.HFSIgnorable(r) {
				t.Fatalf("accepted %q with %U", name, r)
			}
		}
		for _, seg := range strings.Split(name, "/") {
			low := strings.ToLower(seg)
			if seg == "" || seg == "." || seg == ".." || gitpath.IsDotGit(seg) || strings.HasPrefix(low, ".git") ||
				strings.TrimSpace(seg) != seg || strings.HasSuffix(seg, ".") {
				t.Fatalf("accepted %q with component %q", name, seg)
			}
		}
	})
}

// FuzzRules: a path the rules allow is under the root, named acceptably,
// covered by no protect pattern in any letter case or through any of its
// directories, and matched by a files glob when files are set. Protect
// patterns and files globs are checked with CheckPattern first, as hone.toml
// does at load; matching never panics on what it accepts.
func FuzzRules(f *testing.F) {
	f.Add("testdata/**", "*.c", "targets/t/a.c")
	f.Add("**/*_test.go", "dir/**", "targets/t/dir/x_test.go")
	f.Add("gen", "json.[ch]", "targets/t/GEN/json.c")
	f.Add("[a-", "**", "targets/t/x")
	f.Add("a/**/b", "a/**/b/*.c", "targets/t/a/b/c.c")
	f.Add("tests/**", "*", "hone.toml")
	f.Add("x", "**", ".Hone/allowed_signers")
	f.Fuzz(func(t *testing.T, protect, files, p string) {
		if CheckPattern(protect) != nil || CheckPattern(files) != nil {
			return
		}
		top := Rules{Root: ".", Protect: []string{protect}, Files: []string{files}}
		if top.Rule(p) == "" && (CheckName(p) != "" || Reserved(p) != "" || !MatchFile(files, p)) {
			t.Fatalf("a top-level target allowed %q (files %q)", p, files)
		}
		r := Rules{Root: "targets/t", Protect: []string{protect}, Files: []string{files}}
		if r.Rule(p) != "" {
			return
		}
		rel, ok := strings.CutPrefix(p, "targets/t/")
		if !ok || CheckName(p) != "" || !MatchFile(files, rel) {
			t.Fatalf("allowed %q (protect %q, files %q)", p, protect, files)
		}
		segs := strings.Split(rel, "/")
		for n := 1; n <= len(segs); n++ {
			dir := strings.Join(segs[:n], "/")
			if Protected(protect, dir) || Protected(protect, strings.ToUpper(dir)) || Protected(strings.ToUpper(protect), dir) {
				t.Fatalf("allowed %q although %q is protected by %q", p, dir, protect)
			}
		}
		// A glob without metacharacters names exactly one path.
		if !strings.ContainsAny(files, "*?[\\") && strings.TrimSuffix(files, "/") != rel {
			t.Fatalf("files %q matched %q", files, rel)
		}
	})
}

// backtrack is the plain recursive reading of a segment pattern, as the
// matcher was first written: obviously right, exponential in the stars.
func backtrack(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for skip := 0; skip <= len(segs); skip++ {
				if backtrack(pat[1:], segs[skip:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// FuzzMatcherAgreesWithBacktracking: the linear matcher answers as the
// obvious recursive one does, for whole paths and for leading directories.
func FuzzMatcherAgreesWithBacktracking(f *testing.F) {
	f.Add("**/a/**/b", "a/x/b")
	f.Add("a/**", "a")
	f.Add("**", "x/y")
	f.Add("*/b*", "q/bb/c")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		pat, segs := strings.Split(pattern, "/"), strings.Split(p, "/")
		if len(pat) > 8 || len(segs) > 12 {
			return
		}
		if got, want := matchSegs(pat, segs, false), backtrack(pat, segs); got != want {
			t.Fatalf("whole %q vs %q: %v, want %v", pattern, p, got, want)
		}
		want := false
		for n := 1; n <= len(segs); n++ {
			want = want || backtrack(pat, segs[:n])
		}
		if got := matchSegs(pat, segs, true); got != want {
			t.Fatalf("leading %q vs %q: %v, want %v", pattern, p, got, want)
		}
	})
}

// Many "**" against a deep path (a diff can name one) is answered at once;
// a backtracking matcher would not finish.
func TestManyStarsOnADeepPath(t *testing.T) {
	pat := strings.Repeat("**/", 12) + "x"
	deep := strings.Repeat("a/", 3000) + "b"
	if MatchFile(pat, deep) || Protected(pat, deep) {
		t.Fatal("matched a path without the final segment")
	}
	if !MatchFile(pat, deep[:len(deep)-1]+"x") {
		t.Fatal("missed a match")
	}
}
