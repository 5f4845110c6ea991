package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
	"github.com/hone-perf/hone/worktree"
)

// gitIn runs git in dir. cmd/hone's tests do not import internal/testgit:
// its init clears GIT_INDEX_FILE and the other variables git gives hooks,
// and this test binary is also the hone that the scripts' hooks run.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// testIO is a factory over buffers, for running commands in-process.
type testIO struct {
	f           *factory
	out, errOut *bytes.Buffer
}

func newTestIO(dir, stdin string) *testIO {
	t := &testIO{out: &bytes.Buffer{}, errOut: &bytes.Buffer{}}
	t.f = &factory{io: &IOStreams{In: strings.NewReader(stdin), Out: t.out, ErrOut: t.errOut}, dir: dir}
	return t
}

// honeIn runs one hone invocation in-process in dir, as main does, and
// returns its streams and exit status.
func honeIn(dir string, args ...string) (stdout, stderr string, code int) {
	tio := newTestIO(dir, "")
	code = tio.f.run(args)
	return tio.out.String(), tio.errOut.String(), code
}

// Every check a constructor makes refuses with exit 2 before any work: run
// outside a repository, a check that came after opening the workspace
// would exit 4 instead.
func TestConstructorsRefuseBadFlagsBeforeAnyWork(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"pending with exit-code", []string{"verdict", "--pending", "--exit-code"}, "--pending judges every pending proposal"},
		{"pending with rejudge", []string{"verdict", "--pending", "--rejudge", "why"}, "--pending judges every pending proposal"},
		{"dry run with keep", []string{"verdict", "abcd", "--dry-run", "--keep"}, "--dry-run only says what a verdict would do"},
		{"recompute with a patch id", []string{"verdict", "abcd", "--recompute", "0123"}, "--recompute takes an entry id instead"},
		{"verdict without an id", []string{"verdict"}, "hone verdict needs a PATCH-ID"},
		{"negative max pairs", []string{"verdict", "abcd", "--max-pairs", "-1"}, "--max-pairs must be positive"},
		{"negative threshold", []string{"verdict", "abcd", "--threshold", "-0.1"}, "--threshold must be positive"},
		{"blank rejudge reason", []string{"verdict", "abcd", "--rejudge", "  "}, "--rejudge needs a reason"},
		{"verdict show file without gate", []string{"verdict", "show", "abcd", "--file", "case.input"}, "--file names a file of a gate"},
		{"unknown ledger kind", []string{"ledger", "list", "--kind", "bogus"}, `--kind "bogus" is not one of`},
		{"unknown kind on the group", []string{"ledger", "--kind", "bogus"}, `--kind "bogus" is not one of`},
		{"zero push timeout", []string{"ledger", "push", "--timeout", "0s"}, "--timeout must be positive"},
		{"negative sessions", []string{"calibrate", "t", "--sessions", "-1"}, "--sessions and --max-pairs must be positive"},
		{"negative frequency", []string{"profile", "run", "t", "--frequency", "-1"}, "--frequency must be a positive number"},
		{"short lease", []string{"runner", "--lease", "10ms"}, "--lease must be at least 1s"},
		{"agent without harness", []string{"agent", "run", "t"}, "--harness is required"},
		{"agent without turns", []string{"agent", "run", "t", "--harness", "exec", "--turns", "0"}, "--turns must be at least 1"},
		{"report without html", []string{"report"}, "hone report needs --html FILE"},
		{"playbook not a number", []string{"playbook", "three"}, "must be a number from 1 to"},
		{"range like an option", []string{"guard", "commits", "t", "--", "-x"}, "looks like an option"},
		{"unknown shell", []string{"shell-init", "fish"}, `unsupported shell "fish"`},
		{"propose without its flags", []string{"patch", "propose", "t"}, `required flag(s) "class", "hotspot", "hypothesis" not set`},
		{"too many arguments", []string{"patch", "show", "a", "b"}, "takes 1 argument(s), got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := honeIn(dir, tc.args...)
			if code != int(errs.Usage) || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
			}
			if !strings.HasSuffix(strings.TrimSpace(stderr), "--help`") {
				t.Errorf("stderr %q does not point at the command's help", stderr)
			}
		})
	}
}

// With --json a failure is one JSON object on stderr and nothing on
// stdout, whichever step failed: flag parsing, a constructor's check, or
// the run.
func TestJSONFailureIsOneErrorObject(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code errs.Code
	}{
		{[]string{"verdict", "abcd", "--max-pairs", "-1", "--json"}, errs.Usage},
		{[]string{"ledger", "--no-such-flag", "--json"}, errs.Usage},
		{[]string{"--json", "targets"}, errs.NotFound},
		{[]string{"patch", "list", "--json"}, errs.NotFound},
	} {
		stdout, stderr, code := honeIn(dir, tc.args...)
		var obj struct {
			Error struct {
				Code     string `json:"code"`
				ExitCode int    `json:"exit_code"`
				Message  string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(stderr), &obj); err != nil || strings.Count(stderr, "\n") != 1 {
			t.Errorf("hone %s: stderr %q is not one JSON line: %v", strings.Join(tc.args, " "), stderr, err)
			continue
		}
		if code != int(tc.code) || obj.Error.ExitCode != code || obj.Error.Code != tc.code.Name() || obj.Error.Message == "" || stdout != "" {
			t.Errorf("hone %s: exit %d, error %+v, stdout %q; want exit %d (%s)", strings.Join(tc.args, " "), code, obj.Error, stdout, tc.code, tc.code.Name())
		}
	}
}

// writeError maps every typed error to its exit status, in one place; a
// NotAccepted verdict says nothing more as text, its verdict is printed.
func TestWriteErrorMapsEachCodeToItsExitStatus(t *testing.T) {
	for _, code := range []errs.Code{errs.Failure, errs.Usage, errs.Policy, errs.NotFound, errs.Invalid, errs.Busy, errs.NotAccepted} {
		err := errs.New(code, "line one\n  line two")
		var text, js bytes.Buffer
		if got := writeError(&text, err, false); got != int(code) {
			t.Errorf("%s: exit %d, want %d", code.Name(), got, code)
		}
		want := "hone: line one; line two\n"
		if code == errs.NotAccepted {
			want = ""
		}
		if text.String() != want {
			t.Errorf("%s: text %q, want %q", code.Name(), text.String(), want)
		}
		writeError(&js, err, true)
		wantJSON := `{"error":{"code":"` + code.Name() + `","exit_code":` + itoa(int(code)) + `,"message":"line one; line two"}}` + "\n"
		if js.String() != wantJSON {
			t.Errorf("%s: JSON %q, want %q", code.Name(), js.String(), wantJSON)
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The constructors turn flags and arguments into Options; runF stands in
// for the run, so no workspace is needed.
func TestConstructorsFillOptions(t *testing.T) {
	f := newTestIO("", "").f
	execute := func(t *testing.T, cmd *cobra.Command, args ...string) {
		t.Helper()
		cmd.SetArgs(args)
		cmd.SetOut(f.io.Out)
		cmd.SetErr(f.io.ErrOut)
		if err := cmd.Execute(); err != nil {
			t.Fatalf("%s %s: %v", cmd.Name(), strings.Join(args, " "), err)
		}
	}
	t.Run("verdict", func(t *testing.T) {
		var got *verdictOptions
		execute(t, newVerdictCmd(f, func(o *verdictOptions) error { got = o; return nil }),
			"3f2a", "--max-pairs", "60", "--threshold", "0.1", "--rejudge", "overloaded", "--exit-code", "--json")
		if got.PatchID != "3f2a" || got.Judge.MaxPairs != 60 || got.Judge.Threshold != 0.1 || got.Judge.Rejudge != "overloaded" || !got.ExitCode || !got.out.JSON || got.Pending {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("verdict pending takes a target", func(t *testing.T) {
		var got *verdictOptions
		execute(t, newVerdictCmd(f, func(o *verdictOptions) error { got = o; return nil }), "--pending", "wordfreq")
		if !got.Pending || got.PatchID != "wordfreq" || got.out.JSON {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("ledger list", func(t *testing.T) {
		var got *ledgerListOptions
		execute(t, newLedgerListCmd(f, func(o *ledgerListOptions) error { got = o; return nil }), "wordfreq", "--kind", "verdict", "--patch", "3f2a", "--all")
		want := ledger.Filter{Target: "wordfreq", Kind: ledger.KindVerdict, PatchID: "3f2a"}
		if got.Filter != want || !got.All {
			t.Errorf("options %+v, want filter %+v and --all", got, want)
		}
	})
	t.Run("ledger push", func(t *testing.T) {
		var got *ledgerSyncOptions
		execute(t, newLedgerSyncCmd(f, "push", func(o *ledgerSyncOptions) error { got = o; return nil }), "backup", "--timeout", "5s")
		if got.Verb != "push" || got.Remote != "backup" || got.Timeout != 5*time.Second {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("ledger pull defaults to origin", func(t *testing.T) {
		var got *ledgerSyncOptions
		execute(t, newLedgerSyncCmd(f, "pull", func(o *ledgerSyncOptions) error { got = o; return nil }))
		if got.Remote != "origin" {
			t.Errorf("remote %q", got.Remote)
		}
	})
	t.Run("playbook", func(t *testing.T) {
		var got *playbookOptions
		execute(t, newPlaybookCmd(f, func(o *playbookOptions) error { got = o; return nil }))
		if !got.List {
			t.Errorf("no class: options %+v, want the list", got)
		}
		execute(t, newPlaybookCmd(f, func(o *playbookOptions) error { got = o; return nil }), "0")
		if got.List || got.Class != 0 {
			t.Errorf("class 0: options %+v, want class 0 asked for (and refused by the run)", got)
		}
	})
	t.Run("source", func(t *testing.T) {
		var got *sourceOptions
		execute(t, newSourceCmd(f, func(o *sourceOptions) error { got = o; return nil }), "wordfreq", "main.c", "--offset", "5", "--limit", "10")
		if got.Target != "wordfreq" || got.Path != "main.c" || got.Offset != 5 || got.Limit != 10 {
			t.Errorf("options %+v", got)
		}
	})
	t.Run("worktree enter", func(t *testing.T) {
		var got *worktreeEnterOptions
		execute(t, newWorktreeEnterCmd(f, func(o *worktreeEnterOptions) error { got = o; return nil }), "--name", "idea", "--base", "head", "--target", "wordfreq")
		if got.Enter.Name != "idea" || got.Enter.Base != "head" || got.Enter.Target != "wordfreq" {
			t.Errorf("options %+v", got.Enter)
		}
	})
	t.Run("guard hook", func(t *testing.T) {
		var got *guardHookOptions
		execute(t, newGuardRefUpdateCmd(f, func(o *guardHookOptions) error { got = o; return nil }), "committed")
		if len(got.Args) != 1 || got.Args[0] != "committed" {
			t.Errorf("args %q", got.Args)
		}
	})
}

// noNull fails t when the JSON holds a null anywhere: an empty list is [],
// an absent value is left out.
func noNull(t *testing.T, b []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	walkKeys(v, "", func(path, key string, value any) {
		if value == nil {
			t.Errorf("%s.%s is null in %s", path, key, b)
		}
	})
}

// A verdict's warnings are a list even when there are none, and go to
// stderr as text, never into the JSON's stream.
func TestVerdictRenderingCarriesItsWarnings(t *testing.T) {
	e := &verdict.Entry{}
	e.ID, e.Kind, e.Target, e.Verdict, e.Summary = "0194c2d1", ledger.KindVerdict, "wordfreq", ledger.VerdictAccepted, "faster"

	tio := newTestIO("", "")
	out := tio.f.output()
	out.JSON = true
	if err := renderVerdict(&out, e, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID       string         `json:"id"`
		Verdict  string         `json:"verdict"`
		Warnings []errs.Warning `json:"warnings"`
	}
	if err := json.Unmarshal(tio.out.Bytes(), &got); err != nil || got.ID != e.ID || got.Verdict != "accepted" || got.Warnings == nil {
		t.Errorf("JSON %s (%v): want the entry with \"warnings\": []", tio.out, err)
	}
	if !bytes.Contains(tio.out.Bytes(), []byte(`"warnings": []`)) || tio.errOut.Len() != 0 {
		t.Errorf("stdout %s, stderr %q", tio.out, tio.errOut)
	}

	tio = newTestIO("", "")
	out = tio.f.output()
	w := errs.Warning{Code: "uncalibrated", Message: "no calibration of wordfreq on this host"}
	if err := renderVerdict(&out, e, []errs.Warning{w}); err != nil {
		t.Fatal(err)
	}
	if tio.errOut.String() != "hone: warning: "+w.Message+"\n" || !strings.Contains(tio.out.String(), "verdict    accepted") {
		t.Errorf("text: stdout %q, stderr %q", tio.out, tio.errOut)
	}
}

// No violations is {"violations": []} and exit 0; any is exit 3.
func TestViolationsRenderAsAListAndRefuse(t *testing.T) {
	tio := newTestIO("", "")
	out := tio.f.output()
	out.JSON = true
	if err := reportViolations(&out, nil); err != nil {
		t.Fatal(err)
	}
	noNull(t, tio.out.Bytes())
	if !strings.Contains(tio.out.String(), `"violations": []`) {
		t.Errorf("JSON %s", tio.out)
	}
}

// Tables show each id as its shortest unique prefix among every row of the
// ledger, not only the rows shown, and "-" where a field is empty.
func TestLedgerTableAbbreviatesAgainstTheWholeLedger(t *testing.T) {
	rows := []ledger.Row{
		{ID: "0194c2d1aaaa", Kind: ledger.KindProposal, Target: "wf", PatchID: "3f2a9c01", Pin: "0123456789abcdef", Class: 5, Hotspot: "find_word", Hypothesis: "hash the words"},
		{ID: "0194c2d1bbbb", Kind: ledger.KindVerdict, Target: "wf", PatchID: "3f2a9c01", Verdict: "accepted", Speedup: 1.5, Flags: []string{ledger.FlagWeak}},
	}
	every := append(rows, ledger.Row{ID: "0194c2d1aaab", Kind: ledger.KindProfile, Target: "wf"})
	var b bytes.Buffer
	if err := writeLedgerRows(&b, rows[:1], every); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("table %q", b.String())
	}
	fields := strings.Fields(lines[1])
	if fields[0] != "0194c2d1aaaa" || fields[3] != "3f2a" || fields[5] != "find_word" || fields[7] != "-" {
		t.Errorf("row %q: want the full id (another row shares 11 characters), the patch as 3f2a, and - for no verdict", lines[1])
	}
	b.Reset()
	if err := writeLedgerRows(&b, rows[1:], every); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "accepted (weak)") || !strings.Contains(b.String(), "1.50x") {
		t.Errorf("verdict row %q: want its flag beside the word and its speedup", b.String())
	}
}

func TestVerifyTextSaysHowVerdictsAreTrusted(t *testing.T) {
	for _, tc := range []struct {
		rep  ledger.VerifyReport
		want string
	}{
		{ledger.VerifyReport{Entries: 3, Commits: 4, Notes: 1, Verdicts: 1}, "ok: 3 entries, 4 commits, 1 note lines, 1 verdicts, unsigned or not checked (no allowed_signers: every verdict counts)\n"},
		{ledger.VerifyReport{Entries: 3, Commits: 4, Notes: 2, Verdicts: 2, Trusted: 1, SignersConfigured: true}, "ok: 3 entries, 4 commits, 2 note lines, 1 of 2 verdicts signed by an allowed signer (trusted)\n"},
		{ledger.VerifyReport{Problems: []ledger.Problem{{Kind: "deleted", Path: "wf/verdict/01.toml", Message: "gone"}}}, "deleted\twf/verdict/01.toml\tgone\n"},
	} {
		var b bytes.Buffer
		if err := writeVerify(&b, &tc.rep); err != nil || b.String() != tc.want {
			t.Errorf("got %q, %v; want %q", b.String(), err, tc.want)
		}
	}
}

func TestPendingLinesSayWhatHappenedToEachProposal(t *testing.T) {
	e := &verdict.Entry{}
	e.Verdict, e.Summary = "rejected-bench", "no change"
	for _, tc := range []struct {
		j    verdict.Judgement
		want string
	}{
		{verdict.Judgement{PatchID: "3f2a", Entry: e}, "3f2a  rejected-bench  no change\n"},
		{verdict.Judgement{PatchID: "3f2b", Error: "locked by another runner", Skipped: true}, "3f2b  skipped: locked by another runner\n"},
	} {
		var b bytes.Buffer
		writeJudgement(&b, tc.j)
		if b.String() != tc.want {
			t.Errorf("got %q, want %q", b.String(), tc.want)
		}
	}
}

// exit prints the directory to go to on stdout and its message on stderr;
// with --json only the object, so a shell's cd never sees the message.
func TestWorktreeExitPrintsOnlyTheDirectoryOnStdout(t *testing.T) {
	res := &worktree.ExitResult{Action: "keep", Dir: "/repo", Message: "session ended"}
	tio := newTestIO("", "")
	out := tio.f.output()
	if err := writeExit(&out, res); err != nil {
		t.Fatal(err)
	}
	if tio.out.String() != "/repo\n" || tio.errOut.String() != "session ended\n" {
		t.Errorf("stdout %q, stderr %q", tio.out, tio.errOut)
	}
	tio = newTestIO("", "")
	out = tio.f.output()
	out.JSON = true
	if err := writeExit(&out, res); err != nil {
		t.Fatal(err)
	}
	noNull(t, tio.out.Bytes())
	if tio.errOut.Len() != 0 || !strings.Contains(tio.out.String(), `"dir": "/repo"`) {
		t.Errorf("stdout %q, stderr %q", tio.out, tio.errOut)
	}
}

// The commands that need only git run in-process against a real
// repository: init, then every read of the empty workspace, in text and
// JSON, with empty lists as [].
func TestReadCommandsInProcessOnAFreshWorkspace(t *testing.T) {
	for k, v := range map[string]string{"HOME": t.TempDir(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "hone test", "GIT_AUTHOR_EMAIL": "test@hone.invalid",
		"GIT_COMMITTER_NAME": "hone test", "GIT_COMMITTER_EMAIL": "test@hone.invalid"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "targets", "wf"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "targets", "wf", "main.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "the target")
	if stdout, stderr, code := honeIn(dir, "init", "--target", "wf"); code != 0 || !strings.Contains(stdout, "created the ledger branch") {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "hone.toml")

	for _, tc := range []struct {
		args []string
		want string // on stdout
	}{
		{[]string{"targets"}, "wf"},
		{[]string{"targets", "--json"}, `"pin_commit": "`},
		{[]string{"ledger"}, ""},
		{[]string{"ledger", "--json"}, "[]\n"},
		{[]string{"ledger", "list", "wf", "--kind", "verdict", "--json"}, "[]\n"},
		{[]string{"patch", "list", "--json"}, "[]\n"},
		{[]string{"ledger", "verify"}, "ok: 0 entries"},
		{[]string{"ledger", "verify", "--json"}, `"problems": []`},
		{[]string{"playbook", "--json"}, `"number": 7`},
		{[]string{"version", "--json"}, `"go_version": "go`},
		{[]string{"worktree", "status", "--json"}, `"active": false`},
		{[]string{"worktree", "list", "--json"}, "[]\n"},
	} {
		stdout, stderr, code := honeIn(dir, tc.args...)
		if code != 0 || !strings.Contains(stdout, tc.want) || (tc.want == "" && stdout != "") {
			t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
			continue
		}
		if tc.args[len(tc.args)-1] == "--json" {
			noNull(t, []byte(stdout))
			if stderr != "" {
				t.Errorf("hone %s: stderr %q with --json", strings.Join(tc.args, " "), stderr)
			}
		}
	}
	if _, stderr, code := honeIn(dir, "ledger", "list", "nosuch"); code != int(errs.NotFound) || !strings.Contains(stderr, "nosuch") {
		t.Errorf("an unknown target: exit %d, stderr %q; want 4 naming it", code, stderr)
	}
}

// Each way output prints goes to one stream or the other by --json alone:
// data, lines printed while running, remarks, warnings and a child's
// stderr.
func TestOutputWritesEachKindWhereItsModeSays(t *testing.T) {
	write := func(asJSON bool) (stdout, stderr string) {
		tio := newTestIO("", "")
		out := tio.f.output()
		out.JSON = asJSON
		out.text(func(w io.Writer) { io.WriteString(w, "progress line\n") })
		out.note("a remark %d", 1)
		out.warn(errs.Warning{Code: "c", Message: "a warning"})
		s := out.stream()
		io.WriteString(s.childStderr("child_stderr"), "child says\n")
		if err := s.emit(map[string]int{"n": 1}, func(w io.Writer) { io.WriteString(w, "event 1\n") }); err != nil {
			t.Fatal(err)
		}
		err := out.printFrom(func() (any, error) { return []string{}, nil }, func(w io.Writer) error {
			_, err := io.WriteString(w, "the data\n")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return tio.out.String(), tio.errOut.String()
	}
	stdout, stderr := write(false)
	if stdout != "progress line\nevent 1\nthe data\n" || stderr != "hone: a remark 1\nhone: warning: a warning\nchild says\n" {
		t.Errorf("text: stdout %q, stderr %q", stdout, stderr)
	}
	stdout, stderr = write(true)
	if stdout != "{\"child_stderr\":\"child says\"}\n{\"n\":1}\n[]\n" || stderr != "" {
		t.Errorf("JSON: stdout %q, stderr %q; want JSON alone on stdout and nothing on stderr", stdout, stderr)
	}
}

// JSON data is computed only for --json: text never pays for it, nor
// fails on it.
func TestPrintFromBuildsTheDataOnlyForJSON(t *testing.T) {
	tio := newTestIO("", "")
	out := tio.f.output()
	err := out.printFrom(func() (any, error) { return nil, errs.Invalidf("unknown kind") }, func(w io.Writer) error { return nil })
	if err != nil {
		t.Errorf("text output built the JSON data: %v", err)
	}
	out.JSON = true
	if err := out.printFrom(func() (any, error) { return nil, errs.Invalidf("unknown kind") }, nil); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("JSON output: %v, want the data's error", err)
	}
}

func TestDryRunTextSaysWhatTheVerdictWouldDo(t *testing.T) {
	for _, tc := range []struct {
		p    verdict.Planned
		want string
	}{
		{verdict.Planned{PatchID: "3f2a", Target: "wf", Pin: "0123456789abcdef", Outcome: "judge"}, "would      judge it (--dry-run spends no attempt)\n"},
		{verdict.Planned{PatchID: "3f2a", Target: "wf", Pin: "0123456789abcdef", Outcome: "judged", Detail: "entry 0194 is accepted"}, "would      refuse to judge it again: entry 0194 is accepted\n"},
		{verdict.Planned{PatchID: "3f2a", Target: "wf", Pin: "0123456789abcdef", Outcome: "refuse", Reason: "stale-pin", Detail: "the pin moved"}, "would      record error (stale-pin) without running any of its code: the pin moved\n"},
	} {
		var b bytes.Buffer
		if err := writePlan(&b, &tc.p); err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(b.String(), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "patch      3f2a (target wf) at pin 0123456789ab") || lines[1] != tc.want {
			t.Errorf("outcome %s: %q, want the patch line, then %q, and no rules without a config blob", tc.p.Outcome, b.String(), tc.want)
		}
	}
}

func TestPushTextSaysWhatTheRemoteGained(t *testing.T) {
	for _, tc := range []struct {
		rep  ledger.SyncReport
		want []string
	}{
		{ledger.SyncReport{}, []string{"ledger: this clone has no hone/ledger branch yet; nothing to push", "patches: pushed 0 patch refs"}},
		{ledger.SyncReport{RemoteLedger: "created", EntriesPushed: 1, RemoteNotes: "created", PatchesPushed: 1},
			[]string{"ledger: created hone/ledger on origin with 1 entry", "notes: created refs/notes/hone on origin", "patches: pushed 1 patch ref"}},
		{ledger.SyncReport{EntriesAdded: 2, RemoteLedger: "inbox", EntriesPushed: 3, RemoteNotes: "inbox"},
			[]string{"pulled from origin first: 2 entries, 0 patches", "ledger: pushed 3 new entries to this clone's inbox on origin", "notes: pushed to this clone's inbox on origin"}},
		{ledger.SyncReport{RemoteLedger: "up-to-date", RemoteNotes: "up-to-date"}, []string{"ledger: hone/ledger on origin is up to date", "notes: refs/notes/hone on origin is up to date"}},
	} {
		var b bytes.Buffer
		writePush(&b, "hone/ledger", "refs/notes/hone", "origin", &tc.rep)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v: %q lacks %q", tc.rep, b.String(), w)
			}
		}
	}
}

func TestInitTextSaysWhatItDidAndWhatIsLeft(t *testing.T) {
	var b bytes.Buffer
	writeInit(&b, &workspace.InitResult{Config: "/r/hone.toml", LedgerBranch: "hone/ledger"})
	if !strings.HasPrefix(b.String(), "already initialized: /r/hone.toml") || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("run again: %q, want one line", b.String())
	}
	b.Reset()
	writeInit(&b, &workspace.InitResult{Config: "/r/hone.toml", CreatedConfig: true, CreatedLedger: true, LedgerBranch: "hone/ledger",
		Target: "wf", TargetPath: "targets/wf", Pin: "main", Todo: []string{"fill in the bench"}})
	for _, w := range []string{`created /r/hone.toml with target "wf" (path targets/wf, pin main)`, "found no build system", "created the ledger branch hone/ledger",
		"note: targets/wf does not exist yet", "to do before the first verdict:\n  - fill in the bench\n", "next: fill in build, gates and bench"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("%q lacks %q", b.String(), w)
		}
	}
}

// Every command with --json, run in-process where it can do nothing (no
// repository), prints either its JSON on stdout or one error object on
// stderr, never text.
func TestEveryJSONCommandFailsAsOneObject(t *testing.T) {
	dir := t.TempDir()
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		// docs writes its pages where it is told, which here is the test's
		// own directory.
		if !c.Runnable() || c.Flags().Lookup("json") == nil || c.Hidden || strings.HasPrefix(c.CommandPath(), "hone docs") {
			return
		}
		args := strings.Fields(strings.TrimPrefix(c.CommandPath(), "hone"))
		for i := 0; i < 3 && c.Args != nil && c.Args(c, args[len(args)-i:]) != nil; i++ {
			args = append(args, "abcd")
		}
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if _, required := fl.Annotations[cobra.BashCompOneRequiredFlag]; required {
				args = append(args, "--"+fl.Name, "1")
			}
		})
		args = append(args, "--json")
		n++
		stdout, stderr, code := honeIn(dir, args...)
		if code == 0 {
			noNull(t, []byte(stdout))
			return
		}
		var obj map[string]map[string]any
		if err := json.Unmarshal([]byte(stderr), &obj); err != nil || obj["error"]["code"] == nil || stdout != "" {
			t.Errorf("hone %s: exit %d, stdout %q, stderr %q; want one error object", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	walk(newRoot(testFactory(), nil))
	t.Logf("ran %d commands with --json", n)
	if n < 30 {
		t.Errorf("ran %d commands with --json", n)
	}
}
