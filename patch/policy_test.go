package patch

import "testing"

func TestUnquoteGit(t *testing.T) {
	t.Parallel()
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
