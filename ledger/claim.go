package ledger

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
)

// ClaimRefPrefix is where a runner's claims live: ClaimRefPrefix + patch id.
// A claim is created only where none exists (the push's expected old value
// is zero, which every git server checks under its ref lock), so at most one
// runner wins it.
const ClaimRefPrefix = "refs/hone/claims/"

// ClaimRef returns the ref of the claim on patch id.
func ClaimRef(patchID string) string { return ClaimRefPrefix + patchID }

// Claim is what a claim commit says: who judges which patch, until when.
// It is the commit's message after its first line, as TOML, so `git log
// refs/hone/claims/<id>` shows the claim's whole history (creation, each
// heartbeat, a takeover) to anyone with plain git.
type Claim struct {
	Patch   string    `toml:"patch" json:"patch_id"`
	Runner  string    `toml:"runner" json:"runner"`
	Class   string    `toml:"class" json:"class"`
	Version string    `toml:"version" json:"version"`
	Pin     string    `toml:"pin" json:"pin"`
	Renewed time.Time `toml:"renewed" json:"renewed"` // the last heartbeat
	Expires time.Time `toml:"expires" json:"expires"` // the lease's end
	// Repository is the identity ([runner] repository) of the repository
	// the claim was made for; a server whose base names one takes no
	// other.
	Repository string `toml:"repository,omitempty" json:"repository,omitempty"`
}

// Live reports whether the lease still runs at now.
func (c *Claim) Live(now time.Time) bool { return now.Before(c.Expires) }

const claimSubject = "hone: claim "

// tomlMessage is a record commit's message: subject, blank line, v as TOML.
func tomlMessage(subject string, v any) (string, error) {
	var b bytes.Buffer
	b.WriteString(subject + "\n\n")
	if err := toml.NewEncoder(&b).Encode(v); err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot encode %q", subject)
	}
	return b.String(), nil
}

// ParseClaim reads a claim from its commit's message, checking that it is
// one for patchID.
func ParseClaim(patchID, msg string) (*Claim, error) {
	var c Claim
	if err := parseTOMLMessage(claimSubject+patchID, msg, &c); err != nil {
		return nil, err
	}
	switch {
	case c.Patch != patchID:
		return nil, errs.Invalidf("the claim at %s names patch %q", ClaimRef(patchID), c.Patch)
	case c.Runner == "" || c.Expires.IsZero():
		return nil, errs.Invalidf("the claim on patch %s names no runner or no lease expiry", patchID)
	}
	return &c, nil
}

// parseTOMLMessage decodes a record commit's message into v, checking its
// subject.
func parseTOMLMessage(subject, msg string, v any) error {
	got, body, _ := strings.Cut(msg, "\n")
	if strings.TrimSpace(got) != subject {
		return errs.Invalidf("not a %q commit: its subject is %q", subject, errs.Clip(got))
	}
	if _, err := toml.Decode(body, v); err != nil {
		return errs.Wrap(errs.Invalid, err, "the %q commit is not valid TOML", subject)
	}
	return nil
}

// WriteClaim stores claim c as a commit of the empty tree, signed with the
// clone's signing key when it has one, and returns it. parent is the claim
// it renews or takes over (zero for a new claim), so the ref only ever
// moves forward.
func (l *Ledger) WriteClaim(ctx context.Context, c *Claim, parent plumbing.Hash) (plumbing.Hash, error) {
	if c.Repository == "" {
		c.Repository = l.ws.Config.Runner.Repository
	}
	return l.writeRecord(ctx, claimSubject+c.Patch, c, parent)
}

// writeRecord stores v as a record commit (see tomlMessage) of the empty
// tree, signed with the clone's signing key when it has one.
func (l *Ledger) writeRecord(ctx context.Context, subject string, v any, parent plumbing.Hash) (plumbing.Hash, error) {
	msg, err := tomlMessage(subject, v)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	tree, err := l.obj.writeTree(nil)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	return l.obj.commit(ctx, tree, parents, msg, l.sig(), l.signingKey())
}

// commitMessage is the message of a raw commit: everything after its headers.
func commitMessage(raw []byte) string {
	if _, msg, ok := bytes.Cut(raw, []byte("\n\n")); ok {
		return string(msg)
	}
	return ""
}
