package soundness

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Main moved on by a maintainer's optimisation of the target's own code.
// A patch at the old pin that does the same again would be measured
// against a baseline built at the old pin and credited with main's work,
// so the old pin is no longer acceptable: a proposal made there before is
// recorded stale-pin with nothing run, naming the old pin in the working
// tree's hone.toml is refused, and the server's hook (which accepts pins
// by the same rule) refuses such a proposal pushed with plain git.
func TestPatchIsJudgedAgainstTheCodeItWouldLandOn(t *testing.T) {
	w := newWorld(t)
	old := strings.TrimSpace(w.run(w.dir, "git", "rev-parse", "HEAD"))
	again := w.diff("#define REPS 4", "#define REPS 1")
	early := w.propose("one walk is enough", again)
	server := filepath.Join(t.TempDir(), "server.git")
	w.run(w.dir, "git", "init", "-q", "--bare", "-b", "main", server)
	w.run(w.dir, "git", "push", "-q", server, "main")
	w.run(server, w.hone, "hooks", "install", "--server")

	w.write("targets/c/prog.c", strings.Replace(prog, "#define REPS 4", "#define REPS 1", 1))
	w.run(w.dir, "git", "commit", "-qam", "the maintainer's own optimisation")
	w.run(w.dir, "git", "push", "-q", server, "main")
	out, errOut, code := w.exec(w.dir, "git", "push", "--atomic", server, "hone/ledger", "refs/hone/patches/*:refs/hone/patches/*")
	if code == 0 || !strings.Contains(errOut, "stale-pin") {
		t.Errorf("pushing a proposal at the pin before main's optimisation: exit %d\n%s%s\nwant the hook to refuse it (stale-pin)", code, out, errOut)
	}

	e := w.verdict(early)
	if e.Verdict != ledger.VerdictError || e.Reason != workspace.ReasonStalePin || len(e.Gates) != 0 || !strings.Contains(e.Detail, "the target's own code changed") {
		t.Errorf("a proposal at the pin before main's optimisation: %s (%s), %d gates: %s\nwant error (stale-pin) with nothing run", e.Verdict, e.Reason, len(e.Gates), e.Detail)
	}

	w.write("hone.toml", strings.Replace(honeToml, "[targets.c]\n", "[targets.c]\npin = \""+old+"\"\n", 1))
	w.write("patch.diff", again)
	out, errOut, code = w.exec(w.dir, w.hone, "patch", "propose", "c", "--hotspot", "walk", "--class", "5", "--hypothesis", "main did it first", "--file", "patch.diff")
	if code != 3 || !strings.Contains(errOut, "stale-pin") || !strings.Contains(errOut, "the target's own code changed") {
		t.Errorf("proposing main's optimisation again at the old pin: exit %d\n%s%s\nwant exit 3, stale-pin", code, out, errOut)
	}
	w.run(w.dir, "git", "checkout", "--", "hone.toml")
}
