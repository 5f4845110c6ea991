package goalposts

import (
	"os"
	"strings"
	"testing"
)

// An agent edits the pin in its working tree's hone.toml to an older
// commit of main whose goalposts it prefers (no unit gate, a lower
// threshold, weak isolation, the network) or to a commit of a merged side
// branch: hone patch propose refuses it (exit 3, stale-pin), naming the
// current pin and what differs. When it smuggles the proposal into the
// ledger anyway (its own clone's main moved back for a moment), the
// verdict is error, stale-pin, and none of the patch's code runs: not even
// its build, which would leave a marker on the host outside the jail.
func TestAgentCannotPickAnOldPin(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	diff := w.patchDiff("REPS * walk(steps)")
	pins := []struct{ name, pin, says string }{
		{"a merged side branch", w.side, "never the current pin"},
	}
	for _, l := range loosened {
		pins = append(pins, struct{ name, pin, says string }{l.name, w.pins[l.name], "hone.toml"})
	}
	for _, p := range pins {
		t.Run(p.name, func(t *testing.T) {
			w.t = t
			w.write(map[string]string{"hone.toml": strings.Replace(tipToml, `pin = "main"`, `pin = "`+p.pin+`"`, 1)})
			_, errOut, code := w.propose("one walk at "+p.name, diff)
			w.git("checkout", "-q", "--", "hone.toml")
			if code != 3 || !strings.Contains(errOut, "stale-pin") || !strings.Contains(errOut, w.tip[:12]) || !strings.Contains(errOut, p.says) || !strings.Contains(errOut, "re-propose the patch at the current pin") {
				t.Errorf("propose at %s: exit %d\n%s", p.name, code, errOut)
			}
			id := w.proposeAt(p.pin, "one walk at "+p.name, diff)
			e := w.verdict(id)
			w.nothingRan(e, "stale-pin")
			if e.Pin != p.pin || !strings.Contains(e.Detail, "re-propose") {
				t.Errorf("pin %s: %s", e.Pin, e.Detail)
			}
		})
	}
	w.t = t
	// None of them used up the idea: at the current pin it is judged.
	id, errOut, code := w.propose("one walk at the current pin", diff)
	if code != 0 {
		t.Fatalf("propose at the current pin: exit %d\n%s", code, errOut)
	}
	if e := w.verdict(id); e.Verdict == "error" || len(e.Gates) == 0 {
		t.Errorf("at the current pin: %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	// The build ran there, in the jail, which kept it off the host.
	if _, err := os.Stat(w.marker); err == nil {
		t.Errorf("the jailed build wrote the host's %s", w.marker)
	}
}

// An idea rejected at the current pin is tried again at every older pin,
// each a fresh attempt if the pin chose the rules: each is stale-pin, and
// nothing runs.
func TestRejectedIdeaGetsNoAttemptAtOlderPins(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wrong := w.patchDiff("REPS * walk(steps) + 1")
	id, errOut, code := w.propose("fewer walks", wrong)
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	if e := w.verdict(id); e.Verdict != "rejected-gate" {
		t.Fatalf("a wrong answer at the current pin: %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	if _, errOut, code := w.propose("fewer walks", wrong); code != 3 {
		t.Fatalf("the same idea again at the current pin: exit %d\n%s", code, errOut)
	}
	for _, l := range loosened {
		w.write(map[string]string{"hone.toml": strings.Replace(tipToml, `pin = "main"`, `pin = "`+w.pins[l.name]+`"`, 1)})
		_, errOut, code := w.propose("fewer walks", wrong)
		w.git("checkout", "-q", "--", "hone.toml")
		if code != 3 || !strings.Contains(errOut, "stale-pin") {
			t.Errorf("at %s: exit %d\n%s", l.name, code, errOut)
		}
		w.nothingRan(w.verdict(w.proposeAt(w.pins[l.name], "fewer walks", wrong)), "stale-pin")
	}
}

// Honest work: a proposal made at the current pin is judged normally after
// main moves on without touching the goalposts, and is stale-pin, with the
// re-propose message, after the maintainer changes a protected test; the
// idea is then proposed again at the new current pin.
func TestMainMovingOnKeepsHonestProposals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first, errOut, code := w.propose("three walks", w.patchDiff("walk(steps) * REPS"))
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	second, errOut, code := w.propose("two walks", w.patchDiff("(REPS - 1) * walk(steps) + walk(steps)"))
	if code != 0 {
		t.Fatalf("propose: exit %d\n%s", code, errOut)
	}
	w.write(map[string]string{"README.md": "the maintainer's project, documented\n"})
	w.commit("docs")
	if e := w.verdict(first); e.Verdict == "error" || len(e.Gates) == 0 {
		t.Errorf("after main moved on with the same goalposts: %s (%s): %s", e.Verdict, e.Reason, e.Detail)
	}
	w.write(map[string]string{"t/testdata/unit.sh": "\"$HONE_OUT/prog\" selftest && \"$HONE_OUT/prog\" selftest\n"})
	w.commit("a stricter unit test")
	e := w.verdict(second)
	w.nothingRan(e, "stale-pin")
	if !strings.Contains(e.Detail, "t/testdata/unit.sh") || !strings.Contains(e.Detail, "re-propose the patch at the current pin "+w.head()[:12]) {
		t.Errorf("detail %q", e.Detail)
	}
	again, errOut, code := w.propose("two walks", w.patchDiff("(REPS - 1) * walk(steps) + walk(steps)"))
	if code != 0 || again == second {
		t.Fatalf("re-proposing at the current pin: %q exit %d\n%s", again, code, errOut)
	}
}
