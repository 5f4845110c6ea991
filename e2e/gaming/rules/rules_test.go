package rules

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/testproc"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
)

// The gaming suite's games of the rules (testbed's gaming.go tells the
// whole suite's): outputs that are not the answer, answers baked in or
// carried, flags and pragmas hidden from the risk scan, a working tree or
// pin that would loosen the gates, and a verdict shopped for, rerolled,
// paraphrased or cancelled. The games of the running program are
// e2e/gaming.
func TestOptimizerCannotGameTheRules(t *testing.T) { testbed.RunGames(t, ruleGames()) }

func ruleGames() []testbed.Game {
	return []testbed.Game{
		{Name: "print nothing", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("output is overrated", a.Prog("\tprintf(\"%llu\\n\", r);", "\t(void)r;"))
			testbed.GateFailed(t, e, "golden", "stdout differs")
		}},
		{Name: "print the answer to stderr", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("stderr is just as good", a.Fast("\tprintf(\"%llu\\n\", r);", "\tfprintf(stderr, \"%llu\\n\", r);"))
			testbed.GateFailed(t, e, "golden", "stdout differs")
		}},
		{Name: "print the answer of the old fixed input", Run: func(t *testing.T, a *testbed.Arena) {
			answer := a.Answers(0)[0]
			e, _ := a.Judge("the input never changes", a.Prog("\tunsigned long long r = 0;", "\tputs(\""+answer+"\");\n\treturn 0;\n\tunsigned long long r = 0;"))
			testbed.GateFailed(t, e, "golden", "stdout differs")
		}},
		{Name: "carry a table of precomputed answers", Run: func(t *testing.T, a *testbed.Arena) {
			var table []string
			for i, ans := range a.Answers(16) {
				table = append(table, "\tif (argc > 1 && strtoull(argv[1], 0, 10) == "+strconv.Itoa(i)+"ULL) { puts(\""+ans+"\"); return 0; }")
			}
			e, _ := a.Judge("most inputs are known", a.Prog("\tunsigned long long seed = ", strings.Join(table, "\n")+"\n\tunsigned long long seed = "))
			testbed.NotAccepted(t, e, ledger.VerdictRejectedBench)
			if e.Speedup > 1.5 || e.InputSeed < 16 {
				t.Errorf("measured %.2fx on seed %d", e.Speedup, e.InputSeed)
			}
		}},
		{Name: "bake the answer for the seed at build time", Run: func(t *testing.T, a *testbed.Arena) {
			files := a.Prog("\tunsigned long long r = 0;", "\tFILE *baked = fopen(\"/hone/out/answer\", \"r\");\n\tchar line[64];\n\tif (baked && fgets(line, sizeof line, baked)) { fputs(line, stdout); return 0; }\n\tunsigned long long r = 0;")
			files["Makefile"] = testbed.GamingMakefile("cc -O2 -g -o $(OUT)/prog prog.c", "$(OUT)/prog \"$$HONE_SEED\" > $(OUT)/answer")
			e, _ := a.Judge("the build knows the input", files)
			testbed.GateFailed(t, e, "golden", "stdout differs")
		}},
		{Name: "Ofast through _Pragma", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("no pragma here", a.Fast("#define REPS 1", "#define REPS 1\n_Pragma(\"GCC optimize(\\\"Ofast\\\")\")"))
			testbed.Risky(t, e, "fast-math in targets/c/prog.c (preprocessed)")
		}},
		{Name: "Ofast through a pasted pragma", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("two macros", a.Fast("#define REPS 1", "#define REPS 1\n#define CAT(a, b) a##b\n#define OPT(s) CAT(_Prag, ma)(s)\nOPT(\"GCC optimize(\\\"Ofast\\\")\")"))
			testbed.Risky(t, e, "fast-math in targets/c/prog.c (preprocessed)")
		}},
		{Name: "an optimize attribute behind a define", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("a hot function", a.Fast(
				"#define REPS 1", "#define REPS 1\n#define HOT __attribute__((__optimize__(\"Ofast\")))",
				"__attribute__((noinline)) static", "HOT __attribute__((noinline)) static"))
			testbed.Risky(t, e, "fast-math in targets/c/prog.c (preprocessed)")
		}},
		{Name: "asm split across a macro", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("a barrier", a.Fast(
				"#define REPS 1", "#define REPS 1\n#define CAT(a, b) a##b\n#define BARRIER CAT(__as, m__) volatile(\"\" ::: \"memory\")",
				"\tsink = x;", "\tBARRIER;\n\tsink = x;"))
			testbed.Risky(t, e, "inline-asm in targets/c/prog.c (preprocessed)")
		}},
		{Name: "Ofast spelled in the Makefile", Run: func(t *testing.T, a *testbed.Arena) {
			files := a.Fast()
			files["Makefile"] = "SPEED = fast\n" + testbed.GamingMakefile("cc -O$(SPEED) -g -o $(OUT)/prog prog.c")
			e, _ := a.Judge("a build setting", files)
			testbed.Risky(t, e, "fast-math in built prog")
		}},
		{Name: "a thread through a function pointer", Run: func(t *testing.T, a *testbed.Arena) {
			e, _ := a.Judge("a helper thread", a.Fast(
				"#define REPS 1", "#define REPS 1\n#define CAT(a, b) a##b\nextern int CAT(pthread_, create)(void *, const void *, void *(*)(void *), void *);\nextern int CAT(pthread_, join)(unsigned long, void **);\nstatic void *idle(void *p) { return p; }",
				"\tunsigned long long r = 0;", "\tint (*spawn)(void *, const void *, void *(*)(void *), void *) = CAT(pthread_, create);\n\tunsigned long th;\n\tif (spawn(&th, 0, idle, 0) == 0) CAT(pthread_, join)(th, 0);\n\tunsigned long long r = 0;"))
			testbed.Risky(t, e, "threads in built prog (pthread_create)")
		}},
		{Name: "a pragma behind an include cc -E cannot follow", Run: func(t *testing.T, a *testbed.Arena) {
			files := a.Fast("#include <string.h>", "#include <string.h>\n#include DEP")
			files["lib/dep.h"] = "#define CAT(a, b) a##b\n#define OPT(s) CAT(_Prag, ma)(s)\n"
			files["prog.c"] = strings.Replace(files["prog.c"], "#define REPS 1", "#define REPS 1\nOPT(\"GCC optimize(\\\"Ofast\\\")\")", 1)
			files["Makefile"] = testbed.GamingMakefile("cc -O2 -g -Ilib -DDEP='\"dep.h\"' -o $(OUT)/prog prog.c")
			e, _ := a.Judge("a header of its own", files)
			testbed.Risky(t, e, "unpreprocessed in targets/c/prog.c")
		}},
		{Name: "delete the gates in the working tree's hone.toml", Run: uncommittedGates},
		{Name: "move the pin to an agent commit", Run: agentPin},
		{Name: "judge the same patch again", Run: rerollVerdict},
		{Name: "propose the same diff again under other words", Run: rerollProposal},
		{Name: "shop for max-pairs, a threshold or a metric", Run: shopProtocol},
		{Name: "cancel a verdict with SIGINT", Run: func(t *testing.T, a *testbed.Arena) { cancelVerdict(t, a, syscall.SIGINT, 6) }},
		{Name: "kill a verdict with SIGKILL", Run: func(t *testing.T, a *testbed.Arena) { cancelVerdict(t, a, syscall.SIGKILL, 7) }},
		{Name: "paraphrase and rename a judged patch", Run: paraphrase},
	}
}

// uncommittedGates: the gates deleted from the working tree's hone.toml
// change nothing: the pin's golden gate still rejects a wrong answer, and
// the verdict warns.
func uncommittedGates(t *testing.T, a *testbed.Arena) {
	toml := filepath.Join(a.Repo, "hone.toml")
	orig, _ := os.ReadFile(toml)
	var kept []string
	skipping := false
	for _, line := range strings.Split(string(orig), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "[[targets.c.gates]]") {
			skipping = true
		} else if strings.HasPrefix(strings.TrimSpace(line), "[") {
			skipping = false
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	diff := a.Diff(a.Prog("\tprintf(\"%llu\\n\", r);", "\tprintf(\"%llu\\n\", r + 1);"))
	a.WriteAs(toml, strings.Join(kept, "\n"))
	defer a.WriteAs(toml, string(orig))
	id := a.ProposeDiffTo("c", "off by one is close enough", diff)
	e, raw := a.Verdict(id)
	testbed.GateFailed(t, e, "golden", "stdout differs")
	if !strings.Contains(raw, `"code": "uncommitted_config"`) {
		t.Errorf("no warning about the working tree's hone.toml:\n%s", raw)
	}
}

// agentPin: an agent commits a hone.toml without gates on a branch of its
// own and points the working tree's pin at it: the protected tip does not
// accept that pin, so the proposal is refused (exit 3, stale-pin), naming
// the current pin, and no patch ref or entry is left behind.
func agentPin(t *testing.T, a *testbed.Arena) {
	toml := filepath.Join(a.Repo, "hone.toml")
	orig, _ := os.ReadFile(toml)
	a.Git("switch", "-q", "-c", "agent/c/pin")
	a.WriteAs(toml, strings.Replace(string(orig), "name = \"unit\"\n  run = \"sh ./test.sh\"", "name = \"unit\"\n  run = \"true\"", 1))
	a.Git("commit", "-qam", "a faster unit gate")
	a.Git("switch", "-q", "main")
	defer a.Git("branch", "-qD", "agent/c/pin")
	diff := a.Diff(a.Fast())
	a.WriteAs(toml, strings.Replace(string(orig), "[targets.c]\n", "[targets.c]\npin = \"agent/c/pin\"\n", 1))
	defer a.WriteAs(toml, string(orig))
	before := a.LedgerEntries()
	file := filepath.Join(a.Tmp, "patch.diff")
	a.WriteAs(file, diff)
	_, errOut, code := a.RunHone("patch", "propose", "c", "--hotspot", "walk", "--class", "1", "--hypothesis", "one walk, on my own pin", "--file", file)
	if code != 3 || !strings.Contains(errOut, "stale-pin") || !strings.Contains(errOut, "re-propose the patch at the current pin") {
		t.Errorf("a proposal at the agent's own pin: exit %d\n%s", code, errOut)
	}
	if after := a.LedgerEntries(); len(after) != len(before) {
		t.Errorf("the refused proposal left %d entries", len(after)-len(before))
	}
}

// rerollVerdict: a judged patch is not judged again without a person's
// reason, and the runner does not pick it up.
func rerollVerdict(t *testing.T, a *testbed.Arena) {
	id := a.ProposeDiffTo("c", "three walks", a.Diff(a.Prog("#define REPS 4", "#define REPS 3")))
	first, _ := a.Verdict(id)
	for range 2 {
		_, stderr, code := a.RunHone("verdict", id)
		if code != 3 || !strings.Contains(stderr, first.ID) || !strings.Contains(stderr, "--rejudge") {
			t.Errorf("judging again: exit %d: %s", code, stderr)
		}
	}
	if out := a.MustHone("verdict", "--pending", "c"); !strings.Contains(out, "no pending proposals") {
		t.Errorf("the runner judged it again:\n%s", out)
	}
}

// rerollProposal: the judged diff proposed again under another hypothesis
// is refused as a duplicate, naming the verdict.
func rerollProposal(t *testing.T, a *testbed.Arena) {
	diff := a.Diff(a.Prog("#define REPS 4", "#define REPS 2"))
	id := a.ProposeDiffTo("c", "two walks", diff)
	first, _ := a.Verdict(id)
	file := filepath.Join(a.Tmp, "again.diff")
	a.WriteAs(file, diff)
	_, stderr, code := a.RunHone("patch", "propose", "c", "--hotspot", "main", "--class", "3", "--hypothesis", "halve the walks, as a new idea", "--file", file)
	if code != 3 || !strings.Contains(stderr, "duplicate attempt") || !strings.Contains(stderr, first.ID) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// shopProtocol: a verdict cannot be made easier to pass, and a refused one
// records nothing.
func shopProtocol(t *testing.T, a *testbed.Arena) {
	before := a.LedgerEntries()
	id := a.ProposeDiffTo("c", "five walks are fine", a.Diff(a.Prog("#define REPS 4", "#define REPS 5")))
	for _, args := range [][]string{{"--max-pairs", "2"}, {"--threshold", "0.001"}, {"--metric", "wall"}, {"--metric", "instructions"}} {
		_, stderr, code := a.RunHone(append([]string{"verdict", id}, args...)...)
		if code != 3 || !strings.Contains(stderr, "refused") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	after := a.LedgerEntries()
	if len(after) != len(before)+1 {
		t.Errorf("refused verdicts recorded something: %d entries, then %d", len(before), len(after))
	}
}

// cancelVerdict: a verdict interrupted (SIGINT) or killed (SIGKILL) in the
// middle still ends the attempt, as cancelled, and the patch is not judged
// again without a person's reason.
func cancelVerdict(t *testing.T, a *testbed.Arena, sig syscall.Signal, reps int) {
	id := a.ProposeDiffTo("c", strconv.Itoa(reps)+" walks, cancelled "+sig.String(), a.Diff(a.Prog("#define REPS 4", "#define REPS "+strconv.Itoa(reps))))
	// The test holds the bench turn this verdict waits for, so the signal
	// finds it past its gates and short of a decision however quick the
	// machine: in one layout a quiet machine judged it within two seconds.
	turn := filepath.Join(t.TempDir(), "bench.lock")
	held, err := lock.Acquire(context.Background(), turn, "hold the verdict before its bench")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	cmd := a.Command(a.Hone, "verdict", id)
	cmd.Env = append(cmd.Env, verdict.BenchLockEnv+"="+turn)
	progress := &testproc.Buffer{}
	cmd.Stderr = progress
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(progress.String(), "wait for the machine") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the verdict never waited for the bench turn:\n%s", progress)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(a.MustHone("ledger", "list", "--all", "--patch", id), " started ") {
		t.Fatal("no started entry")
	}
	cmd.Process.Signal(sig)
	if err := cmd.Wait(); err == nil {
		t.Fatal("the verdict finished before it was interrupted")
	}
	a.MustHone("gc")
	list := a.MustHone("patch", "list", "c")
	if !strings.Contains(list, id[:4]) || !strings.Contains(list, "cancelled") {
		t.Errorf("patch list:\n%s", list)
	}
	_, stderr, code := a.RunHone("verdict", id)
	if code != 3 || !strings.Contains(stderr, "is cancelled") {
		t.Errorf("judging the cancelled patch again: exit %d: %s", code, stderr)
	}
}

// paraphrase: the same code with its comments reworded and its new
// variable renamed, under another hypothesis, is one idea already judged.
func paraphrase(t *testing.T, a *testbed.Arena) {
	id := a.ProposeDiffTo("c", "one pass", a.Diff(a.Prog("\tfor (int k = 0; k < REPS; k++)", "\tint passes = 1; /* one is enough */\n\tfor (int k = 0; k < passes; k++)")))
	first, _ := a.Verdict(id)
	file := filepath.Join(a.Tmp, "again.diff")
	a.WriteAs(file, a.Diff(a.Prog("\tfor (int k = 0; k < REPS; k++)", "\t// the walks repeat themselves\n\tint   times =  1;\n\tfor (int k = 0; k < times; k++)")))
	_, stderr, code := a.RunHone("patch", "propose", "c", "--hotspot", "main", "--class", "5", "--hypothesis", "remove redundant iterations", "--file", file)
	if code != 3 || !strings.Contains(stderr, "duplicate attempt") || !strings.Contains(stderr, id) || !strings.Contains(stderr, first.ID) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
