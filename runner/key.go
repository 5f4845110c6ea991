package runner

import (
	"context"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/signing"
	"github.com/hone-perf/hone/ledger"
)

// keyProbe is what a runner signs at start to learn which key its
// hone.signingkey is: a path may name a private key or the .pub of a key
// ssh-agent holds, and only a signature says which key actually signs.
// The blank line makes it a commit-shaped payload, headers then body.
var keyProbe = []byte("hone: which key does this runner sign with?\n\n")

// checkKey refuses a runner whose verdicts would not count: with allowed
// signers configured, one without a signing key, one whose key cannot sign,
// and one whose key the allowed signers do not list. Each would otherwise
// find every claim refused by the remote's hook and exit 0 having judged
// nothing, looking healthy while the queue grows.
func checkKey(ctx context.Context, l *ledger.Ledger) error {
	tr, err := l.Trust(ctx)
	if err != nil {
		return err
	}
	key := l.SigningKey()
	if !tr.Configured() {
		return nil
	}
	if key == "" {
		return errs.Policyf("refused: [ledger] allowed_signers is configured (%s), and this runner has no signing key, so its verdicts would not count; set `git config hone.signingkey` to a key that file lists", tr.File)
	}
	armored, err := signing.Sign(ctx, key, keyProbe)
	if err != nil {
		return err
	}
	c := signing.CheckCommit(signing.AddSignature(keyProbe, armored))
	if _, ok := tr.Signers.Principal(c, time.Now()); !ok {
		return errs.Policyf("refused: hone.signingkey %s (%s) is not a key %s lists, so the remote would refuse this runner's claims and its verdicts would not count; add its public key to that file on the protected base, or set `git config hone.signingkey` to a key it lists", key, c.Fingerprint, tr.File)
	}
	return nil
}
