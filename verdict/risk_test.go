package verdict

import (
	"slices"
	"testing"

	"github.com/hone-perf/hone/ledger"
)

// hiddenPatch is the 4x faster patch of the C sample plus code that its
// diff spells so no pattern over the diff's text can see it: names pasted
// together by a macro, a pragma made by a pasted _Pragma operator.
func hiddenPatch(f *fixture, decls, body string) string {
	return f.patch(map[string]func(string) string{"prog.c": func(s string) string {
		s = replace("#define REPS 4", "#define REPS 1\n#define CAT(a, b) a##b\n"+decls)(s)
		return replace("\tunsigned long long r = 0;", body+"\tunsigned long long r = 0;")(s)
	}})
}

func wantRisk(t *testing.T, e *Entry, want ...string) {
	t.Helper()
	if e.Verdict != ledger.VerdictNeedsHumanReview {
		t.Errorf("verdict %s (%s), want needs-human-review: %s", e.Verdict, e.Reason, e.Detail)
	}
	for _, w := range want {
		if !slices.Contains(e.RiskSignals, w) {
			t.Errorf("risk signals %q lack %q", e.RiskSignals, w)
		}
	}
}

// -Ofast asked for by a pragma that a pasted _Pragma operator makes: the
// preprocessed source shows it.
func TestOfastBehindAPastedPragmaNeedsReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(hiddenPatch(f, "#define OPT(s) CAT(_Prag, ma)(s)\nOPT(\"GCC optimize(\\\"Ofast\\\")\")\n", ""), Options{})
	wantRisk(t, e, "fast-math in targets/c/prog.c (preprocessed)")
}

// An asm statement whose keyword a macro pastes together.
func TestAsmBehindAMacroNeedsReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	e := f.verdictOf(hiddenPatch(f, "#define ASM CAT(__as, m__)\n", "\tASM volatile(\"\" ::: \"memory\");\n"), Options{})
	wantRisk(t, e, "inline-asm in targets/c/prog.c (preprocessed)")
}

// A thread started through a function pointer to a pasted name: the
// preprocessed source and the binary's imports both show it.
func TestThreadThroughAFunctionPointerNeedsReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "ctarget", "c", cToml)
	decls := "extern int CAT(pthread_, create)(void *, const void *, void *(*)(void *), void *);\n" +
		"extern int CAT(pthread_, join)(unsigned long, void **);\n" +
		"static void *idle(void *p) { return p; }\n"
	body := "\tint (*spawn)(void *, const void *, void *(*)(void *), void *) = CAT(pthread_, create);\n" +
		"\tunsigned long th;\n\tif (spawn(&th, 0, idle, 0) == 0) CAT(pthread_, join)(th, 0);\n"
	e := f.verdictOf(hiddenPatch(f, decls, body), Options{})
	wantRisk(t, e, "threads in targets/c/prog.c (preprocessed)", "threads in built prog (pthread_create)")
}
