package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/demo"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/verdict"
)

// The demo's steps other than the bench, on its example through real hone
// (in-process): the profile finds find_word, the fix passes both gates, the
// goalpost move and the reworded repeat are refused by policy, and the
// ledger verifies and reports. Whether the fix is faster and the length
// check slower is timed, and so the measurement tier's (demo_session in
// testdata/measure); here the fix's bench is whatever the work meter makes
// of a program that declares none.
func TestDemoStepsBesideTheBench(t *testing.T) {
	tier.Jail(t)
	for _, tool := range []string{"cc", "perf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the demo needs %s", tool)
		}
	}
	gitEnv(t)
	dir := filepath.Join(t.TempDir(), "ws")
	if err := demo.Create(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	ok := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := honeIn(dir, args...)
		if code != 0 {
			t.Fatalf("hone %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	propose := func(hypothesis, diff string) (stdout, stderr string, code int) {
		return honeIn(dir, "patch", "propose", demo.Target, "--hotspot", "find_word", "--class", "5", "--hypothesis", hypothesis,
			"--file", filepath.Join(dir, demo.PatchDir, diff))
	}

	ok("init")
	var p profile.Entry
	if err := json.Unmarshal([]byte(ok("profile", "run", demo.Target, "--json")), &p); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, h := range p.Hotspots {
		found = found || h.Symbol == "find_word" && h.CumPct >= 50
	}
	if !found {
		t.Errorf("the profile does not show find_word in at least half the samples: %+v", p.Hotspots)
	}
	if ok("playbook", "5") == "" {
		t.Error("hone playbook 5 printed nothing")
	}

	stdout, stderr, code := propose("Hash the words instead of scanning them", "hash-table.diff")
	if code != 0 {
		t.Fatalf("proposing the fix: exit %d\n%s", code, stderr)
	}
	fix := strings.TrimSpace(stdout)
	var v verdict.Entry
	if err := json.Unmarshal([]byte(ok("verdict", fix, "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Gates) == 0 || v.Verdict == ledger.VerdictRejectedGate || v.Verdict == ledger.VerdictError {
		t.Errorf("the fix: verdict %s (%s), gates %+v; want its gates passed", v.Verdict, v.Detail, v.Gates)
	}
	for _, g := range v.Gates {
		if !g.Passed {
			t.Errorf("the fix failed gate %s: %s", g.Name, g.Message)
		}
	}

	refs := func() string {
		out, err := exec.Command("git", "-C", dir, "for-each-ref").Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	before := refs()
	for _, tc := range []struct{ hypothesis, diff, want string }{
		{"Hash the words, with the golden gate off", "hash-table-and-config.diff", "hone.toml"},
		{"hash the words -- instead of scanning them!", "hash-table-again.diff", "already has a verdict"},
	} {
		if _, stderr, code := propose(tc.hypothesis, tc.diff); code != int(errs.Policy) || !strings.Contains(stderr, tc.want) {
			t.Errorf("proposing %s: exit %d, %q; want a policy refusal naming %q", tc.diff, code, stderr, tc.want)
		}
	}
	if refs() != before {
		t.Error("a refused proposal wrote a ref")
	}

	if out := ok("ledger", "verify"); !strings.HasPrefix(out, "ok: ") {
		t.Errorf("ledger verify: %q", out)
	}
	report := filepath.Join(dir, demo.ReportFile)
	ok("report", demo.Target, "--html", report)
	if fi, err := os.Stat(report); err != nil || fi.Size() == 0 {
		t.Errorf("hone report wrote no %s: %v", demo.ReportFile, err)
	}
}
