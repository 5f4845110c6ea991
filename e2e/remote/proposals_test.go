package remote

import (
	"strings"
	"testing"
)

// An honest agent proposes a patch; another agent pushes a second proposal
// of the same patch id, backdated, with its own hypothesis, written with
// plain git, and a proposal at a pin it made itself (a commit that
// rewrote the protected golden data) with a patch commit on top. The server
// refuses both; the runner judges the patch once, recording the honest
// proposal's hypothesis.
func TestAgentCannotProposeAnothersPatchAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	honest := w.clone("honest", "honest")
	id := w.propose(honest, `puts("2");`, "print two")
	w.must(honest, "hone", "ledger", "push")

	agent := w.clone("agent", "agent")
	before := w.serverRefs()
	_, body := w.entry(agent, "proposal", id)
	p, forged := rewrite(body, 1, `hypothesis = "print two"`, `hypothesis = "my idea"`)
	w.plant(agent, "", map[string]string{p: forged})
	w.refused(agent, "patch "+id+" already has proposal", "git", "push", "origin", "hone/ledger")

	// A pin of the agent's making: golden data rewritten, then the patch.
	w.must(agent, "git", "reset", "-q", "--hard", "origin/main")
	w.write(agent, map[string]string{"targets/c/testdata/want": "2\n"})
	w.must(agent, "git", "commit", "-q", "-am", "new golden data")
	badPin := strings.TrimSpace(w.must(agent, "git", "rev-parse", "HEAD"))
	w.write(agent, map[string]string{"targets/c/prog.c": strings.Replace(progC, `puts("1");`, `puts("2");`, 1)})
	w.must(agent, "git", "commit", "-q", "-am", "patch")
	commit := strings.TrimSpace(w.must(agent, "git", "rev-parse", "HEAD"))
	w.must(agent, "git", "reset", "-q", "--hard", "origin/main")
	w.must(agent, "hone", "ledger", "pull")
	_, body = w.entry(agent, "proposal", id)
	fake := "ba5e0000ba5e0000"
	p, forged = rewrite(body, 2, `patch_id = "`+id+`"`, `patch_id = "`+fake+`"`)
	forged = replaceField(forged, "pin", badPin)
	forged = replaceField(forged, "commit", commit)
	w.plant(agent, "", map[string]string{p: forged})
	w.refused(agent, "refused (stale-pin): target \"c\" is judged at its current pin", "git", "push", "origin", "hone/ledger", commit+":refs/hone/patches/"+fake)
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}

	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	if len(js) != 1 || js[0].PatchID != id || js[0].Entry == nil {
		t.Fatalf("the runner's judgements: %+v", js)
	}
	if _, v := w.entry(runner, "verdict", id); !strings.Contains(v, `hypothesis = "print two"`) {
		t.Fatalf("the verdict does not record the honest proposal:\n%s", v)
	}
}

// replaceField sets the string field key of a TOML entry to value.
func replaceField(body, key, value string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, key+" = ") {
			lines[i] = key + ` = "` + value + `"`
		}
	}
	return strings.Join(lines, "\n")
}
