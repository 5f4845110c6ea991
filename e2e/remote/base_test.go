package remote

import (
	"strings"
	"testing"
)

// An agent adds its own key to allowed_signers (and, separately, loosens
// hone.toml) on main and pushes main, unsigned or signed with its own key:
// the server refuses both, because only a maintainer key listed at main's
// old tip may change what judges pushes. A maintainer's signed change goes
// through, and the runner loop still judges and pushes.
func TestAgentCannotPushMainWithItsOwnSigner(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	agent := w.clone("agent", "agent")
	before := w.serverRefs()

	w.write(agent, map[string]string{".hone/allowed_signers": "runner@ci " + w.pub("runner") + "agent@evil " + w.pub("agent")})
	w.must(agent, "git", "commit", "-q", "-am", "trust me")
	w.refused(agent, "must be signed by a maintainer, or the forge's branch protection must cover this ref", "git", "push", "origin", "main")
	w.must(agent, "git", "config", "gpg.format", "ssh")
	w.must(agent, "git", "config", "user.signingkey", w.keys["agent"])
	w.must(agent, "git", "commit", "-q", "--amend", "-S", "-m", "trust me, signed")
	w.refused(agent, "does not list", "git", "push", "origin", "main")
	w.write(agent, map[string]string{"targets/c/testdata/want": "2\n"})
	w.must(agent, "git", "commit", "-q", "-S", "-am", "new golden data")
	w.refused(agent, "targets/c/testdata/want", "git", "push", "origin", "main")
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}

	// The maintainer's signed change of hone.toml is an ordinary push.
	maint := w.clone("maintainer", "")
	w.must(maint, "git", "config", "gpg.format", "ssh")
	w.must(maint, "git", "config", "user.signingkey", w.keys["maintainer"])
	toml := w.must(maint, "git", "show", "HEAD:hone.toml")
	w.write(maint, map[string]string{"hone.toml": strings.Replace(toml, "max_queued = 4", "max_queued = 3", 1)})
	w.must(maint, "git", "commit", "-q", "-S", "-am", "queue three")
	w.must(maint, "git", "push", "-q", "origin", "main")

	agent = w.clone("agent-again", "agent")
	id := w.propose(agent, `puts("2");`, "print two")
	w.must(agent, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	if len(js) != 1 || js[0].PatchID != id || js[0].Entry == nil || js[0].Entry.Verdict != "rejected-gate" {
		t.Fatalf("the runner's judgements: %+v", js)
	}
	fresh := w.clone("fresh", "")
	if out := w.must(fresh, "hone", "ledger", "list", "--kind", "verdict"); !strings.Contains(out, "runner@ci") {
		t.Fatalf("a fresh clone's verdicts:\n%s", out)
	}
}
