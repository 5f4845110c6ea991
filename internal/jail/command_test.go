package jail

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

func TestPlainWordsDecidesWhenTheShellIsNeeded(t *testing.T) {
	env := []string{"OUT=/out", "SEED=42", "SPACED=a b", "GLOB=*.c", "EMPTY="}
	for _, c := range []struct {
		name, cmd string
		want      []string // nil: needs the shell
	}{
		{"plain words", "./prog --n 3 input.txt", []string{"./prog", "--n", "3", "input.txt"}},
		{"safe punctuation", "prog -o=a,b:c+d@e%f", []string{"prog", "-o=a,b:c+d@e%f"}},
		{"tabs and runs of spaces", "prog\t a   b ", []string{"prog", "a", "b"}},
		{"single quotes keep anything", `prog 'a b; $X | *'`, []string{"prog", "a b; $X | *"}},
		{"empty quoted argument", `prog '' ""`, []string{"prog", "", ""}},
		{"double quotes without specials", `prog "a b" "c'd"`, []string{"prog", "a b", "c'd"}},
		{"quotes join a word", `prog a'b c'"d"`, []string{"prog", "ab cd"}},
		{"variable", "$OUT/prog --seed $SEED", []string{"/out/prog", "--seed", "42"}},
		{"braced variable", "${OUT}/prog x${SEED}y", []string{"/out/prog", "x42y"}},
		{"spaced value inside double quotes", `prog "$SPACED"`, []string{"prog", "a b"}},
		{"empty value inside double quotes", `prog "$EMPTY"`, []string{"prog", ""}},
		{"spaced value unquoted", "prog $SPACED", nil},
		{"glob value unquoted", "prog $GLOB", nil},
		{"empty value unquoted", "prog $EMPTY", nil},
		{"unset variable", "prog $NOPE", nil},
		{"special parameter", "prog $1", nil},
		{"parameter expansion", "prog ${OUT:-x}", nil},
		{"command substitution", "prog $(date)", nil},
		{"backquotes", "prog `date`", nil},
		{"backquote in double quotes", "prog \"`date`\"", nil},
		{"backslash", `prog a\ b`, nil},
		{"backslash in double quotes", `prog "a\n"`, nil},
		{"pipe", "prog | wc", nil},
		{"redirection", "prog > out", nil},
		{"input redirection", "prog < in", nil},
		{"list", "prog; prog", nil},
		{"and list", "prog && prog", nil},
		{"background", "prog &", nil},
		{"glob", "prog *.c", nil},
		{"question glob", "prog a?", nil},
		{"bracket glob", "prog [ab]", nil},
		{"tilde", "prog ~/x", nil},
		{"comment", "prog # note", nil},
		{"newline", "prog\nprog", nil},
		{"assignment", "X=1 prog", nil},
		{"subshell", "(prog)", nil},
		{"braces", "{ prog; }", nil},
		{"unterminated quote", "prog 'a", nil},
		{"unterminated double quote", `prog "a`, nil},
		{"builtin echo", "echo hi", nil},
		{"builtin true", "true", nil},
		{"builtin by quoting", "'echo' hi", nil},
		{"keyword", "if", nil},
		{"negation", "! prog", nil},
		{"non-ascii", "prog é", nil},
		{"empty", "   ", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := plainWords(c.cmd, lookupIn(env))
			if c.want == nil {
				if ok {
					t.Fatalf("%q was split into %q, want the shell", c.cmd, got)
				}
				return
			}
			if !ok || !slices.Equal(got, c.want) {
				t.Fatalf("%q = %q (ok %v), want %q", c.cmd, got, ok, c.want)
			}
		})
	}
}

func TestPlainWordsNeedsTheShellWhenIFSIsSet(t *testing.T) {
	if _, ok := plainWords("prog a", lookupIn([]string{"IFS=a"})); ok {
		t.Fatal("a command was split without the shell although IFS is set")
	}
}

// The direct path must be indistinguishable from the shell's: the same
// command gives the same stdout and exit status both ways. (The shell lists
// its environment in its own order, so env's output is compared as a set.)
func TestDirectExecBehavesLikeTheShell(t *testing.T) {
	tier.Jail(t)
	dir := t.TempDir()
	writeFile(t, dir, "script", "echo from a script without a shebang \"$@\"\n", 0o755)
	writeFile(t, dir, "noexec", "#!/bin/sh\necho never\n", 0o644)
	env := []string{"WORD=seed-7", "SPACED=a  b"}
	for _, cmd := range []string{
		"env",
		"printenv HOME PWD WORD",
		"/usr/bin/printf '%s|%s|' one 'two words'",
		`/usr/bin/printf '[%s]' "$SPACED" ${WORD}x`,
		"ls -a /work",
		"cat /work/script",
		"/work/script arg1 arg2",
		"/work/noexec",
		"no-such-program x",
		"/no/such/path",
		"sh -c 'exit 7'",
		"wc -c /etc/hosts",
	} {
		t.Run(cmd, func(t *testing.T) {
			spec := Spec{Command: cmd, Dir: "/work", Env: env, Mounts: []Mount{{Host: dir, Jail: "/work", Mode: ReadOnly}}}
			direct := run(t, spec)
			if direct.Shell {
				t.Fatalf("%q ran under the shell; this test wants the direct path", cmd)
			}
			spec.Command = "/bin/sh -c " + Quote(cmd)
			shell := run(t, spec)
			if lines(direct.Stdout.Bytes(), cmd == "env") != lines(shell.Stdout.Bytes(), cmd == "env") || direct.ExitCode != shell.ExitCode {
				t.Errorf("direct: exit %d, stdout %q\nshell:  exit %d, stdout %q", direct.ExitCode, direct.Stdout.Bytes(), shell.ExitCode, shell.Stdout.Bytes())
			}
		})
	}
}

func lines(b []byte, sorted bool) string {
	l := strings.Split(string(b), "\n")
	if sorted {
		slices.Sort(l)
	}
	return strings.Join(l, "\n")
}

func run(t testing.TB, s Spec) *Result {
	t.Helper()
	res, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if res.MeterFailed {
		t.Fatalf("%q was not measured: %s\nstderr: %s", s.Command, res.MeterError, res.Stderr.Tail(2000))
	}
	return res
}
