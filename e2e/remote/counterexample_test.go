package remote

import (
	"strings"
	"testing"
)

// Counterexamples the property test (TestTheRemoteKeepsItsPromisesAgainstAnyPush)
// found, shrunk, each kept as the attack it is.

// An agent pushes to a new inbox's notes ref a commit whose tree is main's
// (hone.toml, the allowed signers): append-only, so once taken, every fold
// merged its "note lines" into refs/notes/hone, which the server then
// refused from every honest push. An inbox's notes are held to the lines
// of verdict entries, as the notes ref is.
func TestMainsTreeOnANotesInboxCannotStopHonestPushes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent := w.clone("agent", "agent")
	main := strings.TrimSpace(w.must(agent, "git", "rev-parse", "origin/main"))
	c := strings.TrimSpace(w.must(agent, "git", "commit-tree", main+"^{tree}", "-p", main, "-m", "notes?"))
	w.refused(agent, "matches no verdict entry", "git", "push", "origin", c+":refs/hone/inbox/a2a2a2a2a2a2a2a2/notes")
	honest := w.clone("honest", "honest")
	w.propose(honest, `puts("2");`, "print two")
	w.must(honest, "hone", "ledger", "push")
	w.honestStepsStillWork(w.clone("runner", "runner"), true)
}
