package patch

import "testing"

func TestAllowlistRule(t *testing.T) {
	a := Allowlist{Root: "targets/t", Protect: []string{"testdata/**", "**/*_test.go", "go.sum", "gen"}}
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

func TestUnquoteGit(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`"a/b c"`, "a/b c", true},
		{`"a\tb"`, "a\tb", true},
		{`"caf\303\251"`, "café", true},
		{`"q\"q\\"`, `q"q\`, true},
		{`"\x41"`, "", false},
		{`"\u0041"`, "", false},
		{`"\U00000041"`, "", false},
		{`"\8"`, "", false},
		{`"\4000"`, "", false},
		{`"open`, "", false},
	} {
		got, _, err := unquoteGit(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("unquoteGit(%s) = %q, %v; want %q ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestGuardedTarget(t *testing.T) {
	pats := []string{"refs/heads/agent/<target>/*", "refs/heads/<target>-opt"}
	for _, c := range []struct {
		ref, target string
		ok          bool
	}{
		{"refs/heads/agent/wf/try1", "wf", true},
		{"refs/heads/agent/wf/deep/er", "wf", true},
		{"refs/heads/wf-opt", "wf", true},
		{"refs/heads/main", "", false},
		{"refs/heads/agent/wf", "", false},
		{"refs/tags/agent/wf/x", "", false},
	} {
		got, ok := GuardedTarget(pats, c.ref)
		if got != c.target || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.ref, got, ok, c.target, c.ok)
		}
	}
}
