package remote

import (
	"strings"
	"testing"
)

// With target c pinned to the tag v1 and the default protected base, an
// agent creates refs/heads/v1 and a branch named like the pin's commit id,
// each holding its own key in allowed_signers: the server refuses both, so
// neither can become what the pin or the protected base names.
func TestAgentCannotShadowAPinnedTagOrCommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "v1", 4)
	agent := w.clone("agent", "agent")
	before := w.serverRefs()
	pin := strings.TrimSpace(w.must(agent, "git", "rev-parse", "v1^{commit}"))

	w.write(agent, map[string]string{".hone/allowed_signers": "agent@evil " + w.pub("agent")})
	w.must(agent, "git", "commit", "-q", "-am", "trust me")
	w.refused(agent, `target c is pinned to "v1", and a branch of that name would be what the pin names`, "git", "push", "origin", "HEAD:refs/heads/v1")
	w.refused(agent, "is spelled like a commit id", "git", "push", "origin", "HEAD:refs/heads/"+pin)
	w.refused(agent, "is spelled like a commit id", "git", "push", "origin", "HEAD:refs/heads/"+pin[:12])
	w.refused(agent, `"v1" would also name refs/tags/v1, so it would resolve ambiguously`, "git", "push", "origin", "HEAD:refs/remotes/v1")
	// git resolves a tag before a branch: a tag main would shadow main.
	w.refused(agent, `"main" would also name refs/heads/main, so it would resolve ambiguously`, "git", "push", "origin", "HEAD:refs/tags/main")
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}

	// The runner loop goes on.
	agent2 := w.clone("agent2", "agent")
	w.propose(agent2, `puts("2");`, "print two")
	w.must(agent2, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	if js := w.runnerLoop(runner); len(js) != 1 || js[0].Entry == nil || js[0].Entry.Verdict != "rejected-gate" {
		t.Fatalf("the runner's judgements: %+v", js)
	}
}
