package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

// newRepo makes a git repository in a new directory with files committed on
// main, with git's identity set and no system or user configuration, for
// running commands in-process against it.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	gitEnv(t)
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "pin")
	return dir
}

// gitEnv gives git an identity and no system or user configuration.
func gitEnv(t *testing.T) {
	for k, v := range map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "hone test", "GIT_AUTHOR_EMAIL": "test@hone.invalid",
		"GIT_COMMITTER_NAME": "hone test", "GIT_COMMITTER_EMAIL": "test@hone.invalid"} {
		t.Setenv(k, v)
	}
}

// propose proposes a change of target c's prog.c from its committed text
// old to new, in-process, and returns the patch id.
func propose(t *testing.T, dir, old, new string) string {
	t.Helper()
	diff := "diff --git a/targets/c/prog.c b/targets/c/prog.c\n--- a/targets/c/prog.c\n+++ b/targets/c/prog.c\n@@ -1 +1 @@\n-" + old + "+" + new
	file := filepath.Join(t.TempDir(), "change.diff")
	if err := os.WriteFile(file, []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := honeIn(dir, "patch", "propose", "c", "--hotspot", "main", "--class", "1", "--hypothesis", "exit early", "--file", file)
	if code != 0 {
		t.Fatalf("patch propose: exit %d\n%s", code, stderr)
	}
	return strings.TrimSpace(stdout)
}

// The protocol comes from hone.toml at the protected tip: a verdict may
// measure more pairs or demand more, never fewer or less, nor choose its
// metric, and a refused verdict records nothing. All of it is decided
// before any of the patch's code runs.
func TestVerdictMayOnlyTightenTheProtocol(t *testing.T) {
	const prog = "int main(void) { return 0; }\n"
	dir := newRepo(t, map[string]string{
		"hone.toml":        "[bench]\npairs = 5\nmax_pairs = 10\n\n[targets.c]\nbuild = \"cc -o $HONE_OUT/prog prog.c\"\n\n  [targets.c.bench]\n  run = \"$HONE_OUT/prog\"\n",
		"targets/c/prog.c": prog,
	})
	id := propose(t, dir, prog, "int main(void) { return 1; }\n")
	for _, tc := range []struct {
		flags []string
		code  errs.Code
		want  string
	}{
		{[]string{"--metric", "instructions"}, errs.Policy, "hone: refused: --metric instructions: the metric is cpu-time, from hone.toml at the protected tip; a verdict cannot choose another"},
		{[]string{"--max-pairs", "4"}, errs.Policy, "hone: refused: --max-pairs 4 is below the protected tip's max_pairs 10: a verdict may measure more pairs, never fewer\n"},
		{[]string{"--threshold", "0.01"}, errs.Policy, "hone: refused: --threshold 0.01 is below the protected tip's threshold 0.02"},
		{[]string{"--metric", "speed"}, errs.Usage, `hone: --metric: "speed" is not a metric; use instructions, cpu-time or wall`},
		{[]string{"--rejudge", ""}, errs.Usage, "--rejudge needs a reason"},
	} {
		args := append([]string{"verdict", id}, tc.flags...)
		stdout, stderr, code := honeIn(dir, args...)
		if code != int(tc.code) || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want exit %d saying %q", strings.Join(args, " "), code, stdout, stderr, tc.code, tc.want)
		}
	}
	stdout, stderr, code := honeIn(dir, "ledger", "--patch", id, "--all", "--json")
	if code != 0 || strings.Contains(stdout, `"kind": "started"`) || strings.Contains(stdout, `"kind": "verdict"`) {
		t.Errorf("after refused verdicts the ledger holds (exit %d, %s):\n%s", code, stderr, stdout)
	}
	for _, tc := range []struct {
		args []string
		code errs.Code
		want string
	}{
		{[]string{"calibrate", "c", "--metric", "speed"}, errs.Usage, `hone: --metric: "speed" is not a metric; use instructions, cpu-time or wall`},
		{[]string{"calibrate", "nope"}, errs.NotFound, `unknown target "nope"`},
	} {
		if _, stderr, code := honeIn(dir, tc.args...); code != int(tc.code) || !strings.Contains(stderr, tc.want) {
			t.Errorf("hone %s: exit %d, stderr %q; want exit %d saying %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}
}
