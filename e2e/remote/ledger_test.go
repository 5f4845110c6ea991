package remote

import (
	"strings"
	"testing"
)

// An agent pushes a note saying its patch was accepted at 9.9x, with no
// verdict entry behind it, and a note line copying a real verdict's with
// the verdict word changed: the server refuses both, and a fresh clone's
// `git log --notes=hone` shows only the runner's line.
func TestAgentCannotForgeANote(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	agent, id := w.pushedProposal()
	runner := w.clone("runner", "runner")
	w.runnerLoop(runner)
	w.must(agent, "hone", "ledger", "pull")
	before := w.serverRefs()

	patch := "refs/hone/patches/" + id
	w.must(agent, "git", "notes", "--ref=hone", "append", "-m", "hone-verdict 019b0000000000000000000000000001 accepted patch="+id+" speedup 9.900x", patch)
	w.refused(agent, "matches no verdict entry of the ledger", "git", "push", "origin", "refs/notes/hone")
	w.must(agent, "git", "update-ref", "refs/notes/hone", "refs/notes/hone~1")
	real := strings.TrimSpace(w.must(agent, "git", "notes", "--ref=hone", "show", patch))
	w.must(agent, "git", "notes", "--ref=hone", "append", "-m", strings.Replace(real, " rejected-gate ", " accepted ", 1), patch)
	w.refused(agent, "matches no verdict entry of the ledger", "git", "push", "origin", "refs/notes/hone")
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}
	fresh := w.clone("fresh", "")
	w.must(fresh, "git", "fetch", "-q", "origin", "refs/notes/hone:refs/notes/hone", patch+":"+patch)
	if out := w.must(fresh, "git", "log", "--notes=hone", "-1", patch); strings.Contains(out, "accepted") || !strings.Contains(out, "rejected-gate") {
		t.Fatalf("a fresh clone's notes:\n%s", out)
	}
	w.must(agent, "git", "fetch", "-q", "origin", "+refs/notes/hone:refs/notes/hone")
	w.propose(agent, `puts("3");`, "print three")
	w.must(agent, "hone", "ledger", "push")
	if js := w.runnerLoop(runner); len(js) != 1 || js[0].Entry == nil {
		t.Fatalf("the runner's judgements: %+v", js)
	}
}

// An agent puts files on the ledger branch that are not entries: a file
// c/started where the started entries' directory goes (which would stop
// every verdict of target c), a file of its own at the top, and a
// malformed entry. The server refuses each. Planted without the hook, they
// do not stop the runner: it records one error verdict saying why the
// proposal could not be judged, exits 0 and pushes.
func TestStrayLedgerFilesAreRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	agent, id := w.pushedProposal()
	before := w.serverRefs()
	base := strings.TrimSpace(w.must(agent, "git", "rev-parse", "refs/heads/hone/ledger"))
	for path, want := range map[string]string{
		"c/started":   "adds a file that is not an entry",
		"results.txt": "adds a file that is not an entry",
		"c/proposal/00/00e8d4a5100000000000000000000000.toml": "adds an entry that is not well-formed",
	} {
		w.plant(agent, base, map[string]string{path: "accepted\n"})
		w.refused(agent, want, "git", "push", "origin", "hone/ledger")
	}
	if after := w.serverRefs(); after != before {
		t.Fatalf("the server's refs changed:\n%s\nwas\n%s", after, before)
	}

	w.plant(agent, base, map[string]string{"c/started": "x\n", "c/proposal/00/00e8d4a5100000000000000000000000.toml": "x\n"})
	w.must(w.server, "git", "fetch", "-q", agent, "refs/heads/hone/ledger:refs/heads/hone/ledger")
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	if len(js) != 1 || js[0].PatchID != id || js[0].Entry == nil || js[0].Entry.Verdict != "error" || !strings.Contains(js[0].Error, "c/started is a file") {
		t.Fatalf("the runner's judgements: %+v", js)
	}
	if js := w.runnerLoop(runner); len(js) != 0 {
		t.Fatalf("the second loop judged again: %+v", js)
	}
}

// An agent pushes a proposal without its patch ref: the server refuses it.
// Planted without the hook, it makes the runner record one error verdict
// saying why, judge the other proposal, exit 0 and push; the next loop has
// nothing left to judge.
func TestAProposalWithoutItsPatchRefDoesNotStopTheRunner(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 4)
	agent := w.clone("agent", "agent")
	orphan := w.propose(agent, `puts("2");`, "print two")
	w.refused(agent, "whose ref refs/hone/patches/"+orphan+" is neither on the server nor in this push", "git", "push", "origin", "hone/ledger")
	w.must(w.server, "git", "fetch", "-q", agent, "refs/heads/hone/ledger:refs/heads/hone/ledger")
	w.must(agent, "git", "update-ref", "-d", "refs/hone/patches/"+orphan)

	honest := w.clone("honest", "honest")
	id := w.propose(honest, `puts("3");`, "print three")
	w.must(honest, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	got := map[string]judgement{}
	for _, j := range js {
		got[j.PatchID] = j
	}
	if o := got[orphan]; len(js) != 2 || o.Entry == nil || o.Entry.Verdict != "error" || o.Entry.Reason != "unjudgeable" || !strings.Contains(o.Error, "no commit at refs/hone/patches/") {
		t.Fatalf("the runner's judgements: %+v", js)
	}
	if h := got[id]; h.Entry == nil || h.Entry.Verdict != "rejected-gate" {
		t.Fatalf("the honest proposal: %+v", h)
	}
	if js := w.runnerLoop(runner); len(js) != 0 {
		t.Fatalf("the second loop judged again: %+v", js)
	}
}
