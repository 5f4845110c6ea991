package remote

import (
	"strings"
	"testing"
)

// inboxOf returns the writer id whose inbox on the server holds commit
// signed by the clone dir's key: the clone's hone.writerid.
func (w *world) writerID(dir string) string {
	w.t.Helper()
	return strings.TrimSpace(w.must(dir, "git", "config", "--get", "hone.writerid"))
}

// emptyCommitOn pushes, from clone dir, one empty commit on top of ref as
// the server holds it, back to that ref, and returns what git printed and
// its exit status.
func (w *world) emptyCommitOn(dir, ref string) (string, int) {
	w.t.Helper()
	w.must(dir, "git", "fetch", "-q", "origin", "+"+ref+":refs/attack/tip")
	tree := strings.TrimSpace(w.must(dir, "git", "rev-parse", "refs/attack/tip^{tree}"))
	c := strings.TrimSpace(w.must(dir, "git", "commit-tree", tree, "-p", "refs/attack/tip", "-m", "nothing"))
	out, errOut, code := w.run(dir, "git", "push", "origin", c+":"+ref)
	return out + errOut, code
}

// The attack of issue 44: one empty commit on top of a runner's inbox made
// its next atomic release (verdict, note, claim deletion) a
// non-fast-forward, so the runner exited 8 and dropped the verdict, round
// after round. A runner's inbox moves only to a commit its key signed, and
// its notes only with such a ledger: both pushes are refused, and the
// runner's next round judges and releases.
func TestAnEmptyCommitCannotSilenceARunner(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, _ := w.pushedProposal()
	runner := w.clone("runner", "runner")
	w.must(runner, "hone", "runner", "--once", "--name", "runner0")
	wid := w.writerID(runner)
	for _, what := range []string{"ledger", "notes"} {
		ref := "refs/hone/inbox/" + wid + "/" + what
		out, code := w.emptyCommitOn(agent, ref)
		if code == 0 || !strings.Contains(out, "belongs to the runner whose key") {
			t.Fatalf("an empty commit on the runner's %s: exit %d, want a refusal\n%s", ref, code, out)
		}
	}
	id := w.propose(agent, `puts("3");`, "print three")
	w.must(agent, "hone", "ledger", "push")
	if out := w.must(runner, "hone", "runner", "--once", "--name", "runner0"); !strings.Contains(out, id) {
		t.Fatalf("the runner's next round did not judge %s:\n%s", id, out)
	}
	fresh := w.clone("fresh", "")
	if out := w.must(fresh, "hone", "ledger", "list", "--kind", "verdict"); strings.Count(out, "runner@ci") != 2 {
		t.Fatalf("a fresh clone's verdicts, want two by runner@ci:\n%s", out)
	}
}

// With [guard] pusher naming the variable in which the server says whom it
// authenticated, an agent's inbox belongs to the identity that first wrote
// it: another agent can neither advance it nor write it with no identity,
// and its owner's pushes go on.
func TestAnAgentCannotWriteAnotherAgentsInbox(t *testing.T) {
	t.Parallel()
	w := newWorldWith(t, "main", 5, "pusher = \"HONE_PUSHER\"\n")
	w.pusher = "alice"
	alice := w.clone("alice", "honest")
	w.propose(alice, `puts("2");`, "print two")
	w.must(alice, "hone", "ledger", "push")
	ref := "refs/hone/inbox/" + w.writerID(alice) + "/ledger"

	w.pusher = "mallory"
	mallory := w.clone("mallory", "agent")
	if out, code := w.emptyCommitOn(mallory, ref); code == 0 || !strings.Contains(out, "belongs to alice") {
		t.Fatalf("mallory advancing alice's inbox: exit %d, want a refusal\n%s", code, out)
	}
	w.pusher = ""
	if out, code := w.emptyCommitOn(mallory, ref); code == 0 || !strings.Contains(out, "$HONE_PUSHER is empty") {
		t.Fatalf("a push the server authenticated nobody for: exit %d, want a refusal\n%s", code, out)
	}
	w.pusher = "mallory"
	w.propose(mallory, `puts("4");`, "print four")
	w.must(mallory, "hone", "ledger", "push")

	w.pusher = "alice"
	w.propose(alice, `puts("3");`, "print three")
	w.must(alice, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	if js := w.runnerLoop(runner); len(js) != 3 {
		t.Fatalf("the runner judges all three proposals: %+v", js)
	}
}

// A maintainer retires an inbox: a commit a [guard] maintainers key signed,
// pushed to refs/hone/retired/<writer> with the deletion of the inbox's
// refs. An agent can neither delete an inbox nor retire one, and a retired
// inbox is never written again.
func TestOnlyAMaintainerRetiresAnInbox(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, _ := w.pushedProposal()
	wid := w.writerID(agent)
	inbox := "refs/hone/inbox/" + wid + "/ledger"

	w.refused(agent, "an inbox is never deleted", "git", "push", "origin", ":"+inbox)
	tree := strings.TrimSpace(w.must(agent, "git", "rev-parse", "HEAD^{tree}"))
	forged := strings.TrimSpace(w.must(agent, "git", "commit-tree", tree, "-m", "retire "+wid))
	w.refused(agent, "only a maintainer retires an inbox", "git", "push", "--atomic", "origin", forged+":refs/hone/retired/"+wid, ":"+inbox)

	maint := w.clone("maintainer", "")
	w.must(maint, "git", "config", "gpg.format", "ssh")
	w.must(maint, "git", "config", "user.signingkey", w.keys["maintainer"])
	retire := strings.TrimSpace(w.must(maint, "git", "commit-tree", "-S", tree, "-m", "retire "+wid))
	w.must(maint, "git", "push", "--atomic", "origin", retire+":refs/hone/retired/"+wid, ":"+inbox, ":refs/hone/inbox/"+wid+"/notes")
	if refs := w.serverRefs(); strings.Contains(refs, inbox) {
		t.Fatalf("the retired inbox is still there:\n%s", refs)
	}
	w.refused(agent, "was retired by a maintainer", "git", "push", "origin", "refs/heads/hone/ledger:"+inbox)
	w.must(w.clone("fresh", ""), "hone", "ledger", "verify")
	// A clone that fetched the inbox before forgets it at its next pull.
	w.must(maint, "hone", "ledger", "pull")
	if refs := w.must(maint, "git", "for-each-ref", "refs/hone/remotes/"); strings.Contains(refs, wid) {
		t.Fatalf("the retired inbox is still fetched:\n%s", refs)
	}
}
