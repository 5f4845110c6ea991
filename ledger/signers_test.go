package ledger_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/ledger"
)

// sshKey makes an ed25519 key without a passphrase and returns the private
// key's path and its public key line.
func sshKey(t *testing.T, name string) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", p).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(p + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return p, strings.TrimSpace(string(pub))
}

// trustOnMain commits, on main, an allowed-signers file naming principal
// for pub and a hone.toml that points at it.
func trustOnMain(t *testing.T, dir, principal, pub string) {
	t.Helper()
	testgit.WriteFiles(t, dir, map[string]string{
		".hone/allowed_signers": principal + " " + pub + "\n",
		"hone.toml":             "[ledger]\nallowed_signers = \".hone/allowed_signers\"\n",
	})
	testgit.Git(t, dir, "add", "-A")
	testgit.Git(t, dir, "commit", "-qm", "trust the runner")
}

// addedBy returns the ledger commit that added the entry at path.
func addedBy(t *testing.T, dir, path string) string {
	t.Helper()
	return testgit.Git(t, dir, "log", "--diff-filter=A", "--format=%H", "-1", "hone/ledger", "--", path)
}

// Two clones sign with different keys; only the runner's key is trusted.
// After they push and pull, each clone shows every verdict's signer the
// same way, plain git verifies hone's signatures, and the untrusted verdict
// does not count as the attempt's outcome.
func TestEachVerdictShowsWhoSignedIt(t *testing.T) {
	base := t.TempDir()
	remote := filepath.Join(base, "remote.git")
	testgit.Git(t, base, "init", "-q", "--bare", "-b", "main", remote)
	runnerKey, runnerPub := sshKey(t, "runner")
	agentKey, _ := sshKey(t, "agent")
	a := newRepo(t)
	trustOnMain(t, a, "runner@ci", runnerPub)
	testgit.Git(t, a, "push", "-q", remote, "main")
	testgit.Git(t, a, "remote", "add", "origin", remote)
	b := filepath.Join(base, "b")
	testgit.Git(t, base, "clone", "-q", remote, b)
	testgit.Git(t, a, "config", "hone.signingkey", runnerKey)
	testgit.Git(t, b, "config", "hone.signingkey", agentKey)

	la, lb := openLedger(t, a), openLedger(t, b)
	p := makePatch(t, a, "p1")
	appendOK(t, la, &p)
	runnerVerdict := verdictFor(p, ledger.VerdictRejectedBench, "no change")
	appendOK(t, la, runnerVerdict)
	if _, err := la.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	agentVerdict := verdictFor(p, ledger.VerdictAccepted, "10x, trust me")
	appendOK(t, lb, agentVerdict)
	if _, err := lb.Push(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	if _, err := la.Pull(ctx, "origin"); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name, dir string
	}{{"runner's clone", a}, {"agent's clone", b}} {
		l := openLedger(t, side.dir)
		at, err := l.Attempts(ctx, ledger.Filter{PatchID: "p1"})
		if err != nil || len(at) != 1 || len(at[0].Verdicts) != 2 {
			t.Fatalf("%s: attempts %+v, %v", side.name, at, err)
		}
		signers := map[string]string{}
		for _, v := range at[0].Verdicts {
			signers[v.ID] = v.Signer
			if v.Trusted != (v.ID == runnerVerdict.ID) {
				t.Errorf("%s: verdict %s trusted = %v", side.name, v.ID, v.Trusted)
			}
		}
		if signers[runnerVerdict.ID] != "runner@ci" || signers[agentVerdict.ID] != "untrusted" {
			t.Errorf("%s: signers %v", side.name, signers)
		}
		if o := at[0].Outcome(); o == nil || o.ID != runnerVerdict.ID {
			t.Errorf("%s: the attempt's outcome is %+v, want the runner's verdict", side.name, o)
		}
		rep, err := l.Verify(ctx, ledger.VerifyOptions{RequireSigned: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 1 || rep.Problems[0].Kind != ledger.ProblemUntrusted || rep.Problems[0].Path != ledger.EntryPath("demo", ledger.KindVerdict, agentVerdict.ID) {
			t.Errorf("%s: verify --require-signed: %+v", side.name, rep.Problems)
		}
	}
	allowed := filepath.Join(a, ".hone", "allowed_signers")
	commit := addedBy(t, a, ledger.EntryPath("demo", ledger.KindVerdict, runnerVerdict.ID))
	if out, err := exec.Command("git", "-C", a, "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", commit).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), `Good "git" signature for runner@ci`) {
		t.Fatalf("git verify-commit %s: %v\n%s", commit, err, out)
	}
	show := testgit.Git(t, a, "-c", "gpg.ssh.allowedSignersFile="+allowed, "log", "--show-signature", "-1", commit)
	if !strings.Contains(show, `Good "git" signature for runner@ci`) {
		t.Fatalf("git log --show-signature:\n%s", show)
	}
}

// A verdict written into the ledger by hand (with plain git, no hone, no
// key) is shown as untrusted once signers are configured, and verify
// --require-signed names it as unsigned.
func TestAHandWrittenVerdictIsUntrusted(t *testing.T) {
	dir := newRepo(t)
	runnerKey, runnerPub := sshKey(t, "runner")
	trustOnMain(t, dir, "runner@ci", runnerPub)
	testgit.Git(t, dir, "config", "hone.signingkey", runnerKey)
	l := openLedger(t, dir)
	p := makePatch(t, dir, "p1")
	appendOK(t, l, &p)
	const forged = "019b0000000000000000000000000001"
	vp := ledger.EntryPath("demo", ledger.KindVerdict, forged)
	rewriteEntry(t, dir, vp, "schema = 1\nid = \""+forged+"\"\nkind = \"verdict\"\ntarget = \"demo\"\ncreated = 2026-01-01T00:00:00Z\npatch_id = \"p1\"\ncommit = \""+p.Commit+"\"\nattempt_key = \""+p.AttemptKey+"\"\nverdict = \"accepted\"\nsummary = \"faster\"\n")
	at, err := openLedger(t, dir).Attempts(ctx, ledger.Filter{AttemptKey: p.AttemptKey})
	if err != nil || len(at) != 1 || len(at[0].Verdicts) != 1 {
		t.Fatalf("attempts %+v, %v", at, err)
	}
	if v := at[0].Verdicts[0]; v.Trusted || v.Signer != "untrusted" || v.Signature != "none" || at[0].Outcome() != nil {
		t.Fatalf("a hand-written verdict: %+v", v)
	}
	rep, err := openLedger(t, dir).Verify(ctx, ledger.VerifyOptions{RequireSigned: true})
	if err != nil || !hasProblem(rep, ledger.ProblemUnsigned, vp) {
		t.Fatalf("verify --require-signed: %+v, %v", rep, err)
	}
}
