package fleet

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// heldClaim leaves runner 0's live claim (10 minutes of lease) on a fresh
// proposal: the runner is killed while judging. It returns the patch id and
// the claim's commit.
func heldClaim(t *testing.T, f *fixture, agent string) (string, string) {
	t.Helper()
	id := f.publish(agent, "held", honestPatch)
	r := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--once", "--lease", "10m")
	r.waitFor(t, "judge "+id+": checkout", 60*time.Second)
	if err := syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-r.done
	return id, claimCommit(t, f, id)
}

func claimCommit(t *testing.T, f *fixture, id string) string {
	t.Helper()
	out, _, code := f.run(f.server, "git", "rev-parse", "--verify", "-q", "refs/hone/claims/"+id)
	if code != 0 {
		t.Fatalf("the server has no claim on %s", id)
	}
	return strings.TrimSpace(out)
}

// proposedWithAStrayKey pushes one proposal from a new agent clone and
// makes a key named name that allowed_signers does not list. It returns
// the clone and the key's path.
func (f *fixture) proposedWithAStrayKey(name string) (string, string) {
	f.t.Helper()
	agent := f.clone("agent", "")
	f.publish(agent, "waiting", honestPatch)
	key := f.dir + "/" + name + ".key"
	f.must(f.dir, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key)
	return agent, key
}

// refused asserts a push was refused by the server's hook.
func refused(t *testing.T, what, errOut string, code int, reason string) {
	t.Helper()
	if code == 0 || !strings.Contains(errOut, reason) {
		t.Fatalf("%s: exit %d, want a refusal saying %q:\n%s", what, code, reason, errOut)
	}
}

// An agent with a key of its own, not one allowed_signers lists, pushes a
// claim signed with it, and an unsigned one: the hook refuses both and the
// server holds no claim.
func TestAgentCannotPushAClaimOfItsOwn(t *testing.T) {
	f := newFixture(t, 1)
	agent, key := f.proposedWithAStrayKey("agent")
	id := strings.TrimPrefix(f.serverRefs("refs/hone/patches/")[0], "refs/hone/patches/")
	msg := "hone: claim " + id + "\n\npatch = \"" + id + "\"\nrunner = \"agent\"\nclass = \"\"\nversion = \"\"\npin = \"\"\nrenewed = 2026-01-01T00:00:00Z\nexpires = 2099-01-01T00:00:00Z\n"
	signed := strings.TrimSpace(f.must(agent, "git", "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit-tree", "-S", emptyTree, "-m", msg))
	_, errOut, code := f.run(agent, "git", "push", "origin", signed+":refs/hone/claims/"+id)
	refused(t, "a claim signed with the agent's own key", errOut, code, "signed by no key")
	unsigned := strings.TrimSpace(f.must(agent, "git", "commit-tree", emptyTree, "-m", msg))
	_, errOut, code = f.run(agent, "git", "push", "origin", unsigned+":refs/hone/claims/"+id)
	refused(t, "an unsigned claim pushed with git", errOut, code, "signed by no key")
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Fatalf("the server holds claims %v", claims)
	}
}

// A runner set up with a key allowed_signers does not list (a typo in the
// path, a key never added) would find every claim refused and exit 0
// having judged nothing, a healthy-looking CI job while the queue grows:
// it fails at start instead, exit 3, naming the key and the fix, before
// it claims anything.
func TestRunnerWithAnUnlistedKeyFailsAtStart(t *testing.T) {
	f := newFixture(t, 1)
	_, key := f.proposedWithAStrayKey("stray")
	stray := f.clone("stray", key)
	out, errOut, code := f.run(stray, "hone", "runner", "--once", "--name", "stray")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 3 || len(lines) != 1 || !strings.Contains(errOut, key) || !strings.Contains(errOut, "SHA256:") ||
		!strings.Contains(errOut, ".hone/allowed_signers") || !strings.Contains(errOut, "add its public key") {
		t.Fatalf("hone runner with an unlisted key: exit %d, want 3 and one line naming the key and the fix:\n%s%s", code, out, errOut)
	}
	if claims := f.serverRefs("refs/hone/claims/"); len(claims) != 0 {
		t.Fatalf("the server holds claims %v", claims)
	}
	// The same clone with the listed key judges the proposal.
	f.must(stray, "git", "config", "hone.signingkey", f.keys[0])
	if out := f.must(stray, "hone", "runner", "--once", "--name", "runner0"); !strings.Contains(out, "rejected-bench") && !strings.Contains(out, "accepted") && !strings.Contains(out, "needs-human-review") {
		t.Fatalf("with the listed key the runner judged nothing: %q", out)
	}
}

// An agent deletes a runner's live claim, or moves it to a commit of its
// own, to free the patch for a runner it prefers: both are refused and the
// claim stays where the runner put it.
func TestAgentCannotDeleteOrMoveARunnersClaim(t *testing.T) {
	f := newFixture(t, 1)
	agent := f.clone("agent", "")
	id, held := heldClaim(t, f, agent)
	_, errOut, code := f.run(agent, "git", "push", "origin", ":refs/hone/claims/"+id)
	refused(t, "deleting the claim", errOut, code, "released only together with its verdict")
	f.must(agent, "git", "fetch", "-q", "origin", "refs/hone/claims/"+id)
	msg := f.must(agent, "git", "show", "-s", "--format=%B", "FETCH_HEAD")
	moved := strings.TrimSpace(f.must(agent, "git", "commit-tree", emptyTree, "-p", held, "-m", strings.Replace(msg, "runner0", "agent", 1)))
	_, errOut, code = f.run(agent, "git", "push", "origin", moved+":refs/hone/claims/"+id)
	refused(t, "moving the claim", errOut, code, "signed by no key")
	if now := claimCommit(t, f, id); now != held {
		t.Fatalf("the claim moved from %s to %s", held, now)
	}
}

// A second runner, with a key allowed_signers does list, judges a patch
// another runner holds a live claim on and pushes its verdict: the hook
// refuses it, and the server's ledger has no verdict on the patch.
func TestRunnerCannotPushAVerdictForAClaimItDoesNotHold(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	id, _ := heldClaim(t, f, agent)
	other := f.clone("runner1", f.keys[1])
	f.must(other, "hone", "ledger", "pull")
	f.must(other, "hone", "verdict", id)
	_, errOut, code := f.run(other, "hone", "ledger", "push")
	refused(t, "the other runner's verdict", errOut, code, "holds a claim on")
	if vs := f.entries(f.clone("fresh", ""), "verdict"); len(vs) != 0 {
		t.Fatalf("the server has verdicts %+v", vs)
	}
}

// A second runner judges a patch before the first runner's verdict on it
// arrives, and pushes its own after: the patch already has its verdict, so
// the hook refuses the second one.
func TestRunnerCannotPushASecondVerdictForAJudgedClaim(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	id := f.publish(agent, "twice", honestPatch)
	late := f.clone("runner1", f.keys[1])
	f.must(late, "hone", "ledger", "pull")
	f.must(late, "hone", "verdict", id)
	r := f.startRunner(f.clone("runner0", f.keys[0]), "--name", "runner0", "--once")
	r.wait(t, 2*time.Minute)
	_, errOut, code := f.run(late, "hone", "ledger", "push")
	refused(t, "the late runner's verdict", errOut, code, "already has a")
	if vs := f.entries(f.clone("fresh", ""), "verdict"); len(vs) != 1 {
		t.Fatalf("the server has %d verdicts on %s, want 1: %+v", len(vs), id, vs)
	}
}

// A second runner, whose key allowed_signers lists, pushes a claim that
// ends the first runner's live lease, as a runner giving a patch up does,
// to take the patch for itself: only the claim's holder gives it up, so
// the hook refuses it and the claim stays where its holder put it.
func TestRunnerCannotGiveUpAnotherRunnersClaim(t *testing.T) {
	f := newFixture(t, 2)
	agent := f.clone("agent", "")
	id, held := heldClaim(t, f, agent)
	other := f.clone("runner1", f.keys[1])
	f.must(other, "git", "fetch", "-q", "origin", "refs/hone/claims/"+id)
	msg := f.must(other, "git", "show", "-s", "--format=%B", "FETCH_HEAD")
	renewed := regexp.MustCompile(`(?m)^renewed = (.*)$`).FindStringSubmatch(msg)
	if renewed == nil {
		t.Fatalf("claim without renewed:\n%s", msg)
	}
	ended := regexp.MustCompile(`(?m)^expires = .*$`).ReplaceAllString(msg, "expires = "+renewed[1])
	give := strings.TrimSpace(f.must(other, "git", "-c", "gpg.format=ssh", "-c", "user.signingkey="+f.keys[1], "commit-tree", "-S", emptyTree, "-p", held, "-m", ended))
	_, errOut, code := f.run(other, "git", "push", "origin", give+":refs/hone/claims/"+id)
	refused(t, "giving up runner0's claim", errOut, code, "only the runner holding a claim gives it up")
	if now := claimCommit(t, f, id); now != held {
		t.Fatalf("the claim moved from %s to %s", held, now)
	}
}
