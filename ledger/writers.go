package ledger

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/signing"
)

// RetiredRefPrefix is where a maintainer retires a writer's inbox:
// RetiredRefPrefix + writer id, a commit a [guard] maintainers key signed,
// pushed together with the deletion of the inbox's refs. A retired inbox
// is never written again.
const RetiredRefPrefix = "refs/hone/retired/"

// Pushers is who the server authenticated for one push, as its hook sees
// it: Var names the environment variable the forge sets ([guard] pusher),
// Name its value. With Var empty, inboxes are bound by runners' keys only.
type Pushers struct {
	Var, Name string
	// File keeps, one line per writer id, the identity that first wrote
	// each inbox: "<writer-id> <identity>". It is the server's own record,
	// outside every ref, so no push can write it.
	File string
}

// writersFile is the server's record of whom each inbox belongs to.
func writersFile(gitDir string) string { return filepath.Join(gitDir, "hone", "writers") }

// NewPushers reads the pusher variable var names from the environment,
// for the server repository whose git directory is gitDir.
func NewPushers(gitDir, envVar string) *Pushers {
	p := &Pushers{Var: envVar, File: writersFile(gitDir)}
	if envVar != "" {
		p.Name = strings.TrimSpace(os.Getenv(envVar))
	}
	return p
}

// owners reads the record: writer id -> identity.
func (p *Pushers) owners() (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(p.File)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the inbox owners %s", p.File)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		w, who, ok := strings.Cut(sc.Text(), " ")
		if _, seen := out[w]; ok && !seen {
			out[w] = who
		}
	}
	return out, sc.Err()
}

// Bind records the pusher as the owner of every writer id in writers
// that has none yet. The server's hook calls it once a push passed every
// check; the first owner recorded is the one that counts.
func (p *Pushers) Bind(writers []string) error {
	if p == nil || p.Var == "" || p.Name == "" || len(writers) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p.File), 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(p.File))
	}
	f, err := os.OpenFile(p.File, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot open the inbox owners %s", p.File)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot lock %s", p.File)
	}
	have, err := p.owners()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, w := range writers {
		if _, ok := have[w]; !ok {
			fmt.Fprintf(&b, "%s %s\n", w, p.Name)
			have[w] = p.Name
		}
	}
	if _, err := f.WriteString(b.String()); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot record the inbox owners in %s", p.File)
	}
	return f.Sync()
}

// InboxWriters are the writer ids whose inboxes updates create or move.
func InboxWriters(updates []Update) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range updates {
		if w, _, ok := ParseInboxRef(u.Ref); ok && !u.New.IsZero() && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// inboxKey is the key an inbox ledger commit binds its inbox to: the
// fingerprint of a good signature by a key allowed_signers lists, or "".
func (fc *fleetCheck) inboxKey(h plumbing.Hash) (string, error) {
	if h.IsZero() || !fc.s.Trust.Configured() {
		return "", nil
	}
	c, err := fc.s.src.commitInfo(h)
	if err != nil {
		return "", err
	}
	sg := fc.s.Trust.judge(h, checkSignature(c))
	if sg.Signature == string(signing.Good) && sg.Trusted {
		return sg.Fingerprint, nil
	}
	return "", nil
}

// bound checks that update u of writer's inbox comes from that inbox's
// writer. A runner's inbox (its ledger tip signed by a listed key) moves
// only to a commit that key signed, and its notes only in a push that so
// moves its ledger; any other inbox, where the server names whom it
// authenticated ([guard] pusher), only by the identity that first wrote
// it. A retired inbox is never written again, and an inbox is deleted
// only by its retirement.
func (fc *fleetCheck) bound(ctx context.Context, u Update, writer, what string) (bool, error) {
	if fc.s.Retiring[writer] {
		if !u.New.IsZero() {
			fc.refuse(u.Ref, "inbox %s is being retired in this push; it is only deleted", writer)
		}
		return false, nil
	}
	if _, retired, err := fc.ref(ctx, RetiredRefPrefix+writer); err != nil || retired {
		if retired {
			fc.refuse(u.Ref, "inbox %s was retired by a maintainer (%s%s); it is never written again", writer, RetiredRefPrefix, writer)
		}
		return false, err
	}
	if u.New.IsZero() {
		fc.refuse(u.Ref, "an inbox is never deleted, except by a maintainer retiring it: a commit a [guard] maintainers key signed, pushed to %s%s in the same push", RetiredRefPrefix, writer)
		return false, nil
	}
	cur, _, err := fc.ref(ctx, InboxLedgerRef(writer))
	if err != nil {
		return false, err
	}
	key, err := fc.inboxKey(cur)
	if err != nil {
		return false, err
	}
	if key != "" {
		moved := plumbing.ZeroHash
		for _, o := range fc.updates {
			if o.Ref == InboxLedgerRef(writer) {
				moved = o.New
			}
		}
		got, err := fc.inboxKey(moved)
		if err != nil {
			return false, err
		}
		if got != key {
			if what == "ledger" {
				fc.refuse(u.Ref, "inbox %s belongs to the runner whose key %s signed its tip; it moves only to a commit that key signed", writer, key)
			} else {
				fc.refuse(u.Ref, "inbox %s belongs to the runner whose key %s signed its ledger; its notes move only in a push that moves that ledger to a commit the key signed", writer, key)
			}
			return false, nil
		}
		return true, nil
	}
	p := fc.s.Pushers
	if p == nil || p.Var == "" {
		return true, nil
	}
	if p.Name == "" {
		fc.refuse(u.Ref, "the server names no pusher ($%s is empty), and [guard] pusher binds every agent's inbox to the identity the server authenticated", p.Var)
		return false, nil
	}
	owners, err := p.owners()
	if err != nil {
		return false, err
	}
	if who, ok := owners[writer]; ok && who != p.Name {
		fc.refuse(u.Ref, "inbox %s belongs to %s, whom the server authenticated when it was first written; %s may not write it", writer, who, p.Name)
		return false, nil
	}
	return true, nil
}
