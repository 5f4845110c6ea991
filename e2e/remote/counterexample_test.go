package remote

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"syscall"
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

// Two agents propose one patch (the same diff), each before seeing the
// other's proposal. The server takes the first and refuses the second (a
// patch is proposed once): the later agent's entry is withdrawn from what
// it pushes, not carried into every later push, so its push, and every
// later one, works.
func TestAProposalTheServerRefusedDoesNotStopLaterPushes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	first := w.clone("first", "agent")
	second := w.clone("second", "honest")
	w.propose(first, `puts("2");`, "print two")
	w.propose(second, `puts("2");`, "two, printed")
	w.must(first, "hone", "ledger", "push")
	w.withdrawnOnce(second, "/proposal/")
	id := w.propose(second, `puts("3");`, "print three")
	w.must(second, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	js := w.runnerLoop(runner)
	judged := map[string]bool{}
	for _, j := range js {
		judged[j.PatchID] = j.Entry != nil
	}
	if len(js) != 2 || !judged[id] {
		t.Fatalf("the runner judges the first proposal and %s: %+v", id, js)
	}
	w.must(second, "hone", "ledger", "push")
	w.must(w.clone("fresh", ""), "hone", "ledger", "verify")
}

// A maintainer changes the target's code on main, which moves the pin: a
// proposal an agent made at the old pin and had not pushed yet is refused
// (stale pin) and withdrawn, and the agent's later pushes work.
func TestAProposalAtAPinMainMovedPastDoesNotStopLaterPushes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent := w.clone("agent", "agent")
	w.propose(agent, `puts("2");`, "print two")

	maint := w.clone("maintainer", "")
	w.must(maint, "git", "config", "gpg.format", "ssh")
	w.must(maint, "git", "config", "user.signingkey", w.keys["maintainer"])
	w.write(maint, map[string]string{"targets/c/extra.h": "/* v2 */\n"})
	w.must(maint, "git", "add", "targets/c/extra.h")
	w.must(maint, "git", "commit", "-q", "-S", "-m", "v2")
	w.must(maint, "git", "push", "-q", "origin", "main")

	w.withdrawnOnce(agent, "/proposal/")
	w.must(agent, "git", "pull", "-q", "--ff-only", "origin", "main")
	id := w.propose(agent, `puts("3");`, "print three")
	w.must(agent, "hone", "ledger", "push")
	runner := w.clone("runner", "runner")
	if js := w.runnerLoop(runner); len(js) != 1 || js[0].PatchID != id {
		t.Fatalf("the runner judges %s alone: %+v", id, js)
	}
	w.must(w.clone("fresh", ""), "hone", "ledger", "verify")
}

// The README's two runner modes meet: `hone runner` claimed a proposal and
// was killed while judging it (its claim lives until the lease ends). A CI
// job's `hone verdict --pending` does not judge it: a remote with runners
// is served by one queue protocol, hone runner's, which claims first, and
// --pending says to run `hone runner --once` instead. A verdict judged
// there all the same (hone verdict ID, by a person with the key) is
// refused by the server, the claim's holder judging it, and the clone
// withdraws it instead of carrying it into every later push.
func TestAClaimedProposalIsNotJudgedByPending(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent, id := w.pushedProposal()
	runner := w.clone("runner", "runner")
	cmd := exec.Command(w.hone, "runner", "--once", "--name", "runner0", "--lease", "1h")
	cmd.Dir, cmd.Env = runner, w.env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "claimed") {
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	go io.Copy(io.Discard, stderr)
	cmd.Wait()
	if refs := w.serverRefs(); !strings.Contains(refs, "refs/hone/claims/") {
		t.Fatalf("the killed runner left no claim:\n%s", refs)
	}

	ci := w.clone("ci", "runner")
	if out, errOut, code := w.run(ci, "hone", "verdict", "--pending"); code != 3 || !strings.Contains(errOut, "hone runner --once") {
		t.Fatalf("hone verdict --pending on a remote with runners: exit %d, want a refusal naming hone runner --once\n%s%s", code, out, errOut)
	}
	if out := w.must(ci, "hone", "ledger", "list", "--kind", "verdict"); strings.TrimSpace(out) != "" {
		t.Fatalf("hone verdict --pending recorded a verdict:\n%s", out)
	}
	w.must(ci, "hone", "verdict", id)
	w.withdrawnOnce(ci, "/verdict/")
	w.propose(agent, `puts("3");`, "print three")
	w.must(agent, "hone", "ledger", "push")
	w.must(ci, "hone", "runner", "--once", "--name", "ci")
	fresh := w.clone("fresh", "")
	w.must(fresh, "hone", "ledger", "verify")
}

// withdrawnOnce is a push from clone dir that the server refuses for an
// entry of kind (a path part, "/proposal/"), which the clone withdraws:
// exit 3 naming it, then the next push works.
func (w *world) withdrawnOnce(dir, kind string) {
	w.t.Helper()
	_, errOut, code := w.run(dir, "hone", "ledger", "push")
	if code != 3 || !strings.Contains(errOut, "withdrawn from later pushes") || !strings.Contains(errOut, kind) {
		w.t.Fatalf("the push: exit %d, want a refusal of an entry under %s, withdrawn\n%s", code, kind, errOut)
	}
	w.must(dir, "hone", "ledger", "push")
}

// A push's pull folds the other writers' entries, not their patch
// commits: an agent whose clone learned that way of another agent's
// judged proposal, and never pulled, proposes an idea of its own. The
// anti-double-attempt check compares the new diff with every judged one
// at the pin and must not fail on a judged patch commit the clone lacks
// (found by the property test: `hone patch propose` exited 1, "bad
// object").
func TestAJudgedPatchThisCloneNeverFetchedDoesNotStopAProposal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "main", 5)
	agent := w.clone("agent", "agent")
	honest := w.clone("honest", "honest")
	w.propose(honest, `puts("2");`, "print two")
	w.must(honest, "hone", "ledger", "push")
	w.must(w.clone("runner", "runner"), "hone", "runner", "--once", "--name", "runner0")
	w.must(agent, "hone", "ledger", "push")
	w.propose(agent, `puts("3");`, "print three")
	w.must(agent, "hone", "ledger", "push")
}
