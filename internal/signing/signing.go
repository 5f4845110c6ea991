// Package signing makes and checks git's SSH commit signatures: the gpgsig
// header `git commit -S` writes with gpg.format=ssh, an armored SSHSIG made
// by `ssh-keygen -Y sign -n git`, so plain git (`git verify-commit`, `git log
// --show-signature`) reads what hone signs. Signing runs ssh-keygen, which
// owns the key file; checking is done here, in-process, because a ledger
// listing checks one signature per verdict.
package signing

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/hone-perf/hone/internal/errs"
)

// Namespace is the SSHSIG namespace git signs commits in.
const Namespace = "git"

// Sign returns the armored signature of payload made with the private key
// at keyPath (or the public key of a key held by ssh-agent), as `git commit
// -S` would make it. ssh-keygen runs in a session of its own with no
// terminal and no askpass program, so a key that needs a passphrase is an
// error, never a prompt.
func Sign(ctx context.Context, keyPath string, payload []byte) (string, error) {
	cmd := exec.CommandContext(ctx, "ssh-keygen", "-Y", "sign", "-n", Namespace, "-f", keyPath)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = quietEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errs.Wrap(errs.Failure, err, "cannot sign: ssh-keygen is not installed (apt-get install openssh-client)")
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "passphrase") {
			return "", errs.Invalidf("hone.signingkey %s needs a passphrase, and hone never prompts for one: use a key without a passphrase that only the runner's account can read, or add it to ssh-agent and name its .pub file", keyPath)
		}
		return "", errs.Wrap(errs.Failure, err, "cannot sign with hone.signingkey %s: %s", keyPath, errs.Clip(lastLine(msg)))
	}
	sig := stdout.String()
	if !strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----") {
		return "", errs.Failuref("ssh-keygen -Y sign printed no SSH signature for hone.signingkey %s", keyPath)
	}
	return sig, nil
}

// quietEnv drops what would let ssh-keygen ask anyone for a passphrase.
func quietEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "SSH_ASKPASS", "SSH_ASKPASS_REQUIRE", "DISPLAY", "WAYLAND_DISPLAY":
			continue
		}
		out = append(out, kv)
	}
	return out
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Status says what a commit's signature proved.
type Status string

const (
	Unsigned Status = "none" // no gpgsig header
	Good     Status = "good" // a valid SSH signature in git's namespace
	Bad      Status = "bad"  // a signature that does not verify, or not an SSH one
)

// Checked is a commit's signature as checked, before any trust decision.
type Checked struct {
	Status      Status
	Key         ssh.PublicKey // the signing key, when Status is Good
	Fingerprint string        // ssh-keygen's SHA256:... form of Key
}

// CheckCommit checks the signature of a raw commit object (its content, as
// `git cat-file commit` prints it) against the key the signature names.
// Whether that key is trusted is the allowed signers' business.
func CheckCommit(raw []byte) Checked {
	payload, armored, ok := SplitCommit(raw)
	if !ok {
		return Checked{Status: Unsigned}
	}
	sig, err := sshsig.Unarmor([]byte(armored))
	if err != nil || sig.Namespace != Namespace {
		return Checked{Status: Bad}
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, Namespace); err != nil {
		return Checked{Status: Bad}
	}
	return Checked{Status: Good, Key: sig.PublicKey, Fingerprint: ssh.FingerprintSHA256(sig.PublicKey)}
}

// SplitCommit separates a raw commit into the payload a signature covers
// (the commit without its gpgsig header) and the armored signature, as git's
// parse_signed_commit does. ok is false for an unsigned commit.
func SplitCommit(raw []byte) (payload []byte, armored string, ok bool) {
	end := bytes.Index(raw, []byte("\n\n"))
	if end < 0 {
		end = len(raw)
	}
	var sig strings.Builder
	payload = make([]byte, 0, len(raw))
	inSig := false
	for rest := raw[:end+1]; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = nil
		}
		switch {
		case bytes.HasPrefix(line, []byte("gpgsig ")):
			inSig, ok = true, true
			sig.Write(line[len("gpgsig "):])
		case inSig && bytes.HasPrefix(line, []byte(" ")):
			sig.Write(line[1:])
		default:
			inSig = false
			payload = append(payload, line...)
		}
	}
	payload = append(payload, raw[min(end+1, len(raw)):]...)
	return payload, sig.String(), ok
}

// AddSignature returns the raw commit with armored as its gpgsig header,
// placed after the other headers as git places it.
func AddSignature(payload []byte, armored string) []byte {
	end := bytes.Index(payload, []byte("\n\n"))
	if end < 0 {
		end = len(payload) - 1
	}
	var b bytes.Buffer
	b.Grow(len(payload) + len(armored) + 64)
	b.Write(payload[:end+1])
	b.WriteString("gpgsig ")
	b.WriteString(strings.ReplaceAll(strings.TrimSuffix(armored, "\n"), "\n", "\n "))
	b.WriteByte('\n')
	b.Write(payload[end+1:])
	return b.Bytes()
}
