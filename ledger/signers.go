package ledger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/signing"
	"github.com/hone-perf/hone/workspace"
)

// Signer says who wrote an entry: the signature on the ledger commit that
// added it, and whether that signature is one the protected base's
// allowed_signers trusts. Without allowed_signers every entry is trusted.
type Signer struct {
	Commit      string `json:"commit,omitempty"`      // the ledger commit that added the entry
	Signature   string `json:"signature"`             // good, bad or none
	Principal   string `json:"principal,omitempty"`   // the allowed_signers line that lists the key
	Fingerprint string `json:"fingerprint,omitempty"` // the signing key's SHA256 fingerprint
	Trusted     bool   `json:"trusted"`
}

// Name is the signer as views print it: the principal of a trusted key,
// "untrusted" for anything else when signers are configured, and without
// them the key's fingerprint, "unsigned" or "bad-signature".
func (s Signer) Name() string {
	switch {
	case s.Signature == ForeignRepository:
		return ForeignRepository
	case s.Principal != "":
		return s.Principal
	case !s.Trusted:
		return "untrusted"
	case s.Signature == string(signing.Good):
		return s.Fingerprint
	case s.Signature == string(signing.Bad):
		return "bad-signature"
	}
	return "unsigned"
}

// Trust is how every view spells whether an entry's signer counts:
// "signed by P (trusted)" for a key allowed_signers lists as P,
// "untrusted" (with why) for any other when allowed signers are
// configured, and "unsigned (no allowed_signers)" or "signed by KEY (no
// allowed_signers)" when none are, where every verdict counts.
func (s Signer) Trust(configured bool) string {
	switch {
	case s.Principal != "" && s.Trusted:
		return "signed by " + s.Principal + " (trusted)"
	case configured && s.Signature == string(signing.Bad):
		return "untrusted: bad signature"
	case configured && s.Signature == string(signing.Good):
		return "untrusted: signed by " + s.Fingerprint + ", which allowed_signers does not list"
	case configured:
		return "untrusted: unsigned"
	case s.Signature == string(signing.Good):
		return "signed by " + s.Fingerprint + " (no allowed_signers)"
	case s.Signature == string(signing.Bad):
		return "bad signature (no allowed_signers)"
	}
	return "unsigned (no allowed_signers)"
}

// SigningKey is `git config hone.signingkey`: a private key, or the .pub of
// a key ssh-agent holds, that every ledger commit this clone writes is
// signed with. Empty: ledger commits are not signed.
func (l *Ledger) SigningKey() string { return l.signingKey() }

func (l *Ledger) signingKey() string {
	l.keyOnce.Do(func() {
		l.key = l.ws.Store("").Config("hone.signingkey")
		if rest, ok := strings.CutPrefix(l.key, "~/"); ok {
			l.key = filepath.Join(os.Getenv("HOME"), rest)
		}
	})
	return l.key
}

// Trust is the allowed signers in force, which decide whose verdicts count.
type Trust struct {
	Signers *signing.Signers // nil: none configured, every entry is trusted
	File    string           // "<short commit>:<path>" they were read from
	// Repository is the identity the protected base names ([runner]
	// repository): a verdict or started entry recording another is
	// never trusted here, whoever signed it.
	Repository string
}

// ForeignRepository is the signer every view shows for a verdict judged
// for another repository than the one the protected base names.
const ForeignRepository = "other-repository"

// foreign reports whether an entry recording repository was judged for
// another repository than this one. An entry that records none was
// written before its repository was named (the server's hook, with the
// setting, takes no new one without it).
func (t *Trust) foreign(repository string) bool {
	return t.Repository != "" && repository != "" && repository != t.Repository
}

// Trust returns the allowed signers of the protected base, read once per
// Ledger. A repository whose default branch has no hone.toml has none.
func (l *Ledger) Trust(ctx context.Context) (*Trust, error) { return l.trust(ctx) }

func (l *Ledger) trust(ctx context.Context) (*Trust, error) {
	l.trustOnce.Do(func() {
		b, err := workspace.ProtectedBase(ctx, l.ws.Repo)
		switch {
		case errs.Is(err, errs.NotFound):
			l.tr = &Trust{}
		case err != nil:
			l.trErr = err
		default:
			l.tr, l.trErr = LoadTrust(l.ws.Repo, b)
		}
	})
	return l.tr, l.trErr
}

// signatures caches each ledger commit's checked signature, keyed by commit
// id, in <git common dir>/hone/signatures, so a listing checks each
// signature once. It is a cache like the index: `hone ledger verify` and a
// server's pre-receive check every signature afresh.
type sigCache struct {
	path string
	m    map[plumbing.Hash]sigInfo
}

type sigInfo struct {
	status      signing.Status
	fingerprint string
	when        time.Time // the commit's committer time, which allowed_signers validity is checked at
}

func (l *Ledger) sigCache() *sigCache {
	if l.sigs == nil {
		l.sigs = &sigCache{path: l.ws.StatePath("signatures")}
		l.sigs.load()
	}
	return l.sigs
}

func (c *sigCache) load() {
	c.m = map[plumbing.Hash]sigInfo{}
	f, err := os.Open(c.path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		if len(p) != 4 || !plumbing.IsHash(p[0]) {
			continue
		}
		t, err := strconv.ParseInt(p[3], 10, 64)
		if err != nil {
			continue
		}
		fp := p[2]
		if fp == "-" {
			fp = ""
		}
		c.m[plumbing.NewHash(p[0])] = sigInfo{status: signing.Status(p[1]), fingerprint: fp, when: time.Unix(t, 0)}
	}
}

func (c *sigCache) add(h plumbing.Hash, s sigInfo) {
	c.m[h] = s
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return // the cache only saves time
	}
	fp := s.fingerprint
	if fp == "" {
		fp = "-"
	}
	fmt.Fprintf(f, "%s %s %s %d\n", h, s.status, fp, s.when.Unix())
	f.Close()
}

// checkSignature checks the signature of a commit.
func checkSignature(c *commitInfo) sigInfo {
	sc := signing.CheckCommit(c.raw)
	return sigInfo{status: sc.Status, fingerprint: sc.Fingerprint, when: c.when}
}

// signerOf is the signer of the entry ledger commit h added, through the
// cache.
func (l *Ledger) signerOf(ctx context.Context, h plumbing.Hash) (Signer, error) {
	tr, err := l.trust(ctx)
	if err != nil {
		return Signer{}, err
	}
	if h.IsZero() {
		return tr.judge(plumbing.ZeroHash, sigInfo{status: signing.Unsigned}), nil
	}
	c := l.sigCache()
	info, ok := c.m[h]
	if !ok {
		ci, err := l.obj.commitInfo(h)
		if err != nil {
			return Signer{}, err
		}
		info = checkSignature(ci)
		c.add(h, info)
	}
	return tr.judge(h, info), nil
}

// judge decides whether a checked signature is trusted.
func (t *Trust) judge(commit plumbing.Hash, s sigInfo) Signer {
	out := Signer{Signature: string(s.status), Fingerprint: s.fingerprint, Trusted: t.Signers == nil}
	if !commit.IsZero() {
		out.Commit = commit.String()
	}
	if t.Signers == nil {
		return out
	}
	if p, ok := t.Signers.Principal(signing.Checked{Status: s.status, Fingerprint: s.fingerprint}, s.when); ok {
		out.Principal, out.Trusted = p, true
	}
	return out
}

// Configured reports whether allowed signers are in force.
func (t *Trust) Configured() bool { return t.Signers != nil }

// LoadTrust reads the allowed signers the protected base names: [ledger]
// allowed_signers of its hone.toml, a file read at that same commit.
func LoadTrust(r *repo.Repo, b *workspace.Base) (*Trust, error) {
	t, err := loadSigners(r, b)
	if t != nil {
		t.Repository = b.Config.Runner.Repository
	}
	return t, err
}

func loadSigners(r *repo.Repo, b *workspace.Base) (*Trust, error) {
	name := b.Config.Ledger.AllowedSigners
	if name == "" {
		return &Trust{}, nil
	}
	at := git.Short(b.Commit) + ":" + name
	src := newObjects(r.Store(""))
	c, err := src.commitInfo(plumbing.NewHash(b.Commit))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(b.Commit))
	}
	h, found, err := lookupIn(src, c.tree, name)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", at)
	}
	if !found {
		return nil, errs.Invalidf("[ledger] allowed_signers names %s, which the protected base %s (%s) does not have; commit it there", name, b.Ref, git.Short(b.Commit))
	}
	text, err := src.readBlob(h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read %s", at)
	}
	signers, err := signing.ParseSigners(at, text)
	if err != nil {
		return nil, err
	}
	return &Trust{Signers: signers, File: at}, nil
}
