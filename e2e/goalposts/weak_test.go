package goalposts

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// verdictWith asks for a verdict with extra environment.
func (w *world) verdictWith(env []string, id string) entry {
	w.t.Helper()
	out, errOut, code := w.run(env, w.hone, "verdict", "--json", id)
	if code != 0 {
		w.t.Fatalf("hone verdict %s: exit %d\n%s%s", id, code, out, errOut)
	}
	var e entry
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		w.t.Fatal(err)
	}
	return e
}

// The tip itself says isolation = "weak" (or an agent got it there): a
// verdict still runs nothing of the patch outside the jail until the
// account that runs verdicts allows it, and the repository's own git config
// cannot. Once the account allows it, the patch's build does write the
// host (the marker these tests look for is real) and the verdict says weak
// in its flags and summary.
func TestWeakIsolationIsTheRunnersChoice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.write(map[string]string{"hone.toml": "[sandbox]\nisolation = \"weak\"\n\n" + tipToml})
	w.commit("weak isolation")
	id, errOut, code := w.propose("one walk", w.patchDiff("REPS * walk(steps)"))
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	e := w.verdict(id)
	w.nothingRan(e, "weak-refused")
	if !strings.Contains(e.Detail, "HONE_ALLOW_WEAK_ISOLATION=1") {
		t.Errorf("detail %q", e.Detail)
	}
	w.git("config", "hone.allowWeakIsolation", "true")
	w.nothingRan(w.verdict(id), "weak-refused")
	w.nothingRan(w.verdictWith([]string{"HONE_ALLOW_WEAK_ISOLATION=0"}, id), "weak-refused")

	e = w.verdictWith([]string{"HONE_ALLOW_WEAK_ISOLATION=1"}, id)
	if e.Verdict == "error" || !hasFlag(e.Flags, "weak-isolation") || !strings.HasPrefix(e.Summary, "weak isolation (") {
		t.Errorf("allowed by the account: %s (%s), flags %v: %s", e.Verdict, e.Reason, e.Flags, e.Summary)
	}
	if _, err := os.Stat(w.marker); err != nil {
		t.Errorf("without the jail the patch's build should have reached the host: %v", err)
	}
}
