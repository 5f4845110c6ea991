package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/internal/repo"
)

// readme is the first file of every ledger branch, for whoever finds the
// branch with plain git.
const readme = `# hone ledger

This branch is hone's append-only record of optimization attempts. hone never
checks it out: it writes entries straight into the object store and moves the
branch by compare-and-swap. Do not commit to it by hand.

Each entry is one TOML file at <target>/<kind>/<hh>/<id>.toml (kind is
proposal, verdict, profile or calibration; hh is the id's last two digits),
written once and never changed or deleted. Attachments sit beside their entry
as <id>.<name>. Verdicts are also one-line git notes on the patch commit.

    git ls-tree -r --name-only hone/ledger
    git show hone/ledger:<path>
    git log --notes=hone refs/hone/patches/<patch-id>

hone ledger verify checks that no commit changed or removed an entry.
`

// Init creates the ledger branch with a first commit holding a README, unless
// it exists. It reports whether it created the branch.
func (l *Ledger) Init(ctx context.Context) (bool, error) {
	ref := l.branchRef()
	if _, ok, err := l.refs.Read(ref); err != nil || ok {
		return false, err
	}
	rm, err := l.readmeFile()
	if err != nil {
		return false, err
	}
	tree, err := l.obj.insert(plumbing.ZeroHash, []file{rm})
	if err != nil {
		return false, err
	}
	held, err := l.writeLock(ctx)
	if err != nil {
		return false, err
	}
	defer held.Release()
	c, err := l.obj.commit(ctx, tree, nil, "hone: start the ledger\n", l.sig(), l.signingKey())
	if err != nil {
		return false, err
	}
	switch err := l.refs.CompareAndSwap(ctx, ref, c, plumbing.ZeroHash); {
	case errors.Is(err, repo.ErrRaceLost):
		return false, nil // another process created it first: same result
	case err != nil:
		return false, err
	}
	return true, l.advanceAnchor(ctx, plumbing.ZeroHash, c)
}

// writeLock serialises hone's writers of the ledger branch in this
// repository. Compare-and-swap alone would keep them correct, but a writer
// that loses a race signs its commit again, and a signature is a process.
func (l *Ledger) writeLock(ctx context.Context) (*lock.Lock, error) {
	return lock.Acquire(ctx, l.ws.StatePath("ledger.lock"), "write to the ledger")
}

func (l *Ledger) readmeFile() (file, error) {
	b, err := l.obj.writeBlob([]byte(readme))
	return file{path: "README.md", hash: b}, err
}

// Append writes rec (and its attachments) as one new entry in one commit and
// returns it as stored. It sets Schema, ID and Created when they are empty. A
// verdict entry also gets its one-line note on the patch commit; see
// FORMAT.md for what happens when hone dies between the two.
func (l *Ledger) Append(ctx context.Context, rec Record, att ...Attachment) (*Stored, error) {
	c := rec.Meta()
	now := l.now().UTC()
	if c.Schema == 0 {
		c.Schema = SchemaVersion
	}
	if c.ID == "" {
		c.ID = newID(now)
	}
	if c.Created.IsZero() {
		c.Created = now
	}
	c.Created = c.Created.UTC()
	if c.Kind == KindVerdict && c.Commit == "" && c.PatchID != "" {
		if h, ok, err := l.refs.Read(PatchRef(c.PatchID)); err == nil && ok {
			c.Commit = h.String()
		}
	}
	if (c.Kind == KindVerdict || c.Kind == KindStarted) && c.Repository == "" {
		c.Repository = l.ws.Config.Runner.Repository
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(rec); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "cannot encode ledger entry %s as TOML", c.ID)
	}
	s := &Stored{Common: *c, Path: EntryPath(c.Target, c.Kind, c.ID), Raw: buf.Bytes()}
	files, err := l.entryFiles(s, att)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("hone: %s %s %s\n", c.Kind, c.Target, c.ID)
	if err := l.commitFiles(ctx, files, msg); err != nil {
		return nil, err
	}
	if c.Kind == KindVerdict {
		if err := l.addNote(ctx, s); err != nil {
			return s, errs.Wrap(errs.CodeOf(err), err, "ledger: entry %s is stored but its note is not; `hone ledger verify --repair` adds it", c.ID)
		}
	}
	return s, nil
}

// entryFiles writes the blobs of an entry and its attachments.
func (l *Ledger) entryFiles(s *Stored, att []Attachment) ([]file, error) {
	h, err := l.obj.writeBlob(s.Raw)
	if err != nil {
		return nil, err
	}
	files := []file{{path: s.Path, hash: h}}
	dir := entryDir(s.Target, s.Kind, s.ID)
	seen := map[string]bool{}
	for _, a := range att {
		if !validName(a.Name) || a.Name == "toml" || seen[a.Name] {
			return nil, errs.Invalidf("ledger entry %s: attachment name %q must match [A-Za-z0-9][A-Za-z0-9._-]*, be unique and not be \"toml\"", s.ID, a.Name)
		}
		seen[a.Name] = true
		h, err := l.obj.writeBlob(a.Data)
		if err != nil {
			return nil, err
		}
		files = append(files, file{path: dir + "/" + s.ID + "." + a.Name, hash: h})
	}
	return files, nil
}

// commitFiles adds files to the ledger branch in one commit, retrying on a
// fresh tip whenever another writer moved the branch first. The first commit
// of a branch that does not exist yet also gets the README.
func (l *Ledger) commitFiles(ctx context.Context, files []file, msg string) error {
	held, err := l.writeLock(ctx)
	if err != nil {
		return err
	}
	defer held.Release()
	var made plumbing.Hash
	old, err := repo.UpdateRef(ctx, l.refs, l.branchRef(), func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
		base, err := l.obj.commitTree(tip)
		if err != nil {
			return tip, err
		}
		add := files
		var parents []plumbing.Hash
		if ok {
			parents = []plumbing.Hash{tip}
		} else {
			rm, err := l.readmeFile()
			if err != nil {
				return tip, err
			}
			add = append([]file{rm}, files...)
		}
		tree, err := l.obj.insert(base, add)
		if err != nil {
			return tip, err
		}
		made, err = l.obj.commit(ctx, tree, parents, msg, l.sig(), l.signingKey())
		return made, err
	})
	if err != nil {
		return err
	}
	return l.advanceAnchor(ctx, old, made)
}

func (l *Ledger) branchRef() string { return "refs/heads/" + l.ws.Config.Ledger.Branch }

func (l *Ledger) sig() object.Signature { return signature(os.Getenv, l.now()) }

// Decode fills into (a struct embedding Common) from the stored TOML.
func (s *Stored) Decode(into Record) error {
	if _, err := toml.Decode(string(s.Raw), into); err != nil {
		return errs.Wrap(errs.Invalid, err, "ledger entry %s (%s) is not valid TOML", s.ID, s.Path)
	}
	m := into.Meta()
	if m.Schema > SchemaVersion {
		return errs.Invalidf("ledger entry %s has schema %d, newer than this hone understands (%d); upgrade hone", m.ID, m.Schema, SchemaVersion)
	}
	m.Flags = s.Flags
	return nil
}

// parseStored reads the common part of a stored entry, with the flags of
// an entry written before flags existed derived from its old fields.
func parseStored(path string, raw []byte) (*Stored, error) {
	var e legacyEntry
	if _, err := toml.Decode(string(raw), &e); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "ledger entry %s is not valid TOML", path)
	}
	e.deriveFlags()
	return &Stored{Common: e.Common, Path: path, Raw: raw}, nil
}

func isEntryPath(p string) bool { return strings.HasSuffix(p, ".toml") && strings.Count(p, "/") == 3 }
