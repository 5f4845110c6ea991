package signing

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testgit"
)

// newKey makes an ed25519 key pair with ssh-keygen and returns the private
// key's path and the public key line.
func newKey(t *testing.T, name, passphrase string) (string, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", p).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(p + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return p, strings.TrimSpace(string(pub))
}

// signedCommit writes a commit signed by hone's own code into dir's
// repository and returns its id.
func signedCommit(t *testing.T, dir, key string) string {
	t.Helper()
	id := testgit.Git(t, dir, "commit-tree", "-m", "signed by hone", "HEAD^{tree}")
	raw := testgit.Git(t, dir, "cat-file", "commit", id) + "\n"
	sig, err := Sign(context.Background(), key, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(string(AddSignature([]byte(raw), sig)))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func rawCommit(t *testing.T, dir, id string) []byte {
	return []byte(testgit.Git(t, dir, "cat-file", "commit", id) + "\n")
}

// What hone signs, plain git verifies, and what git signs, hone checks the
// same way.
func TestGitAndHoneAgreeOnSignatures(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"a": "a\n"})
	key, pub := newKey(t, "runner", "")
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte("runner@ci "+pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := signedCommit(t, dir, key)
	out, err := exec.Command("git", "-C", dir, "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "-v", id).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `Good "git" signature for runner@ci`) {
		t.Fatalf("git verify-commit of hone's signature: %v\n%s", err, out)
	}
	signers, err := ParseSigners("allowed_signers", []byte("# trusted\nrunner@ci "+pub+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := CheckCommit(rawCommit(t, dir, id))
	if p, ok := signers.Principal(c, time.Now()); c.Status != Good || !ok || p != "runner@ci" {
		t.Fatalf("hone's check of its own signature: %+v %q %v", c, p, ok)
	}
	testgit.Git(t, dir, "config", "gpg.format", "ssh")
	testgit.Git(t, dir, "config", "user.signingkey", key)
	testgit.Git(t, dir, "commit", "-q", "-S", "--allow-empty", "-m", "signed by git")
	if c := CheckCommit(rawCommit(t, dir, "HEAD")); c.Status != Good {
		t.Fatalf("a commit git signed: %+v", c)
	}
	if c := CheckCommit(rawCommit(t, dir, "HEAD~1")); c.Status != Unsigned {
		t.Fatalf("an unsigned commit: %+v", c)
	}
}

// An agent copies the runner's signature onto a commit of its own (a forged
// verdict): the signature no longer covers what it is attached to.
func TestACopiedSignatureDoesNotVerify(t *testing.T) {
	testgit.Setenv(t)
	dir := testgit.NewRepo(t, map[string]string{"a": "a\n"})
	key, _ := newKey(t, "runner", "")
	raw := rawCommit(t, dir, signedCommit(t, dir, key))
	forged := []byte(strings.Replace(string(raw), "signed by hone", "accepted, honestly", 1))
	if c := CheckCommit(forged); c.Status != Bad {
		t.Fatalf("a signature moved onto another commit: %+v", c)
	}
	payload, sig, ok := SplitCommit(raw)
	if !ok || strings.Contains(string(payload), "gpgsig") || !strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----\n") {
		t.Fatalf("SplitCommit: %v %q %q", ok, payload, sig)
	}
}

// A key that needs a passphrase fails at once: a runner with no terminal
// must not hang on a prompt.
func TestAPassphraseIsAnErrorNotAPrompt(t *testing.T) {
	key, _ := newKey(t, "locked", "secret words")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Sign(ctx, key, []byte("payload"))
	if errs.CodeOf(err) != errs.Invalid || !strings.Contains(err.Error(), "needs a passphrase") {
		t.Fatalf("signing with a locked key: %v", err)
	}
}

func TestAllowedSigners(t *testing.T) {
	_, pub := newKey(t, "a", "")
	_, other := newKey(t, "b", "")
	s, err := ParseSigners("f", []byte(`"runner@ci,ci@x" namespaces="git",valid-after="20200101Z" `+pub+"\nfiles@x namespaces=\"file\" "+other+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	key, _, _, _, _ := parseKey(pub)
	otherKey, _, _, _, _ := parseKey(other)
	good := Checked{Status: Good, Key: key, Fingerprint: fingerprint(key)}
	if p, ok := s.Principal(good, time.Now()); !ok || p != "runner@ci,ci@x" {
		t.Errorf("listed key: %q %v", p, ok)
	}
	if _, ok := s.Principal(good, time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("a signature before valid-after was trusted")
	}
	if _, ok := s.Principal(Checked{Status: Good, Key: otherKey, Fingerprint: fingerprint(otherKey)}, time.Now()); ok {
		t.Error("a key listed only for another namespace was trusted")
	}
	if _, ok := s.Principal(Checked{Status: Bad, Fingerprint: good.Fingerprint}, time.Now()); ok {
		t.Error("a bad signature was trusted")
	}
	for _, bad := range []string{"only-principals\n", "x cert-authority " + pub + "\n", "x " + "ssh-ed25519 AAAA\n", "x nosuch=1 " + pub + "\n"} {
		if _, err := ParseSigners("f", []byte(bad)); errs.CodeOf(err) != errs.Invalid || !strings.HasPrefix(err.Error(), "f:1: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func parseKey(line string) (ssh.PublicKey, string, []string, []byte, error) {
	return ssh.ParseAuthorizedKey([]byte(line))
}

func fingerprint(k ssh.PublicKey) string { return ssh.FingerprintSHA256(k) }
