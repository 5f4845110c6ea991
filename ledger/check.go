package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/signing"
)

// Server is what a server's pre-receive hook needs to judge updates of the
// ledger's refs: the repository (hooks see the pushed objects through git
// alone), the ledger's names, and the allowed signers of the protected
// base.
type Server struct {
	Dir      string // the repository, where git runs
	Branch   string // the ledger branch, e.g. refs/heads/hone/ledger
	NotesRef string
	Trust    *Trust

	cat *git.CatFile
	src reader
}

// Refusal is one reason a push of the ledger's refs is refused.
type Refusal struct {
	Ref, Path, Rule string
}

// Proposed is a proposal a pushed ledger update adds: what a pushed patch
// ref must agree with.
type Proposed struct {
	Target, Commit, Pin string
}

// Open starts reading objects; Close ends it.
func (s *Server) Open(ctx context.Context) error {
	c, err := git.OpenCatFile(ctx, s.Dir)
	if err != nil {
		return err
	}
	s.cat, s.src = c, catFileReader(c)
	return nil
}

func (s *Server) Close() {
	if s.cat != nil {
		s.cat.Close()
	}
}

// newCommits lists the commits new has and old (zero: nothing) has not.
func (s *Server) newCommits(ctx context.Context, old, new plumbing.Hash) ([]plumbing.Hash, error) {
	args := []string{"rev-list", new.String()}
	if !old.IsZero() {
		args = append(args, "^"+old.String())
	}
	out, err := git.Run(ctx, git.Cmd{Dir: s.Dir, Args: args})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the pushed commits")
	}
	var hs []plumbing.Hash
	for _, f := range strings.Fields(string(out)) {
		hs = append(hs, plumbing.NewHash(f))
	}
	return hs, nil
}

// fastForward refuses an update that is a deletion or does not contain the
// old value: the ledger's refs are only ever appended to.
func (s *Server) fastForward(ctx context.Context, ref string, old, new plumbing.Hash) (*Refusal, error) {
	if new.IsZero() {
		return &Refusal{Ref: ref, Rule: "deleting it is not an append; hone never deletes it"}, nil
	}
	if old.IsZero() {
		return nil, nil
	}
	_, err := git.Run(ctx, git.Cmd{Dir: s.Dir, Args: []string{"merge-base", "--is-ancestor", old.String(), new.String()}})
	if git.ExitCode(err) == 1 {
		return &Refusal{Ref: ref, Rule: fmt.Sprintf("%s does not contain %s: not a fast-forward, so not an append (hone ledger push never forces)", git.Short(new.String()), git.Short(old.String()))}, nil
	}
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot compare %s with %s", git.Short(old.String()), git.Short(new.String()))
	}
	return nil, nil
}

// CheckBranch judges an update of the ledger branch from old to new (zero:
// none): a fast-forward whose new commits modify or delete no file, whose
// merges add nothing of their own, whose entries are well-formed and at
// their own paths, and, when signers are configured, whose verdicts were
// each added by a commit an allowed signer signed. It returns the proposals
// the update adds, by patch id.
func (s *Server) CheckBranch(ctx context.Context, old, new plumbing.Hash) ([]Refusal, map[string]Proposed, error) {
	var out []Refusal
	r, err := s.fastForward(ctx, s.Branch, old, new)
	if err != nil || r != nil {
		if r != nil {
			out = append(out, *r)
		}
		return out, nil, err
	}
	commits, err := s.newCommits(ctx, old, new)
	if err != nil {
		return nil, nil, err
	}
	proposed := map[string]Proposed{}
	for _, h := range commits {
		c, err := s.src.commitInfo(h)
		if err != nil {
			return nil, nil, err
		}
		ch, err := changeOf(s.src, c)
		if err != nil {
			return nil, nil, err
		}
		short := git.Short(h.String())
		for _, g := range ch.gone {
			what := "changes"
			if g.deleted {
				what = "deletes"
			}
			out = append(out, Refusal{Ref: s.Branch, Path: g.path, Rule: fmt.Sprintf("commit %s %s an entry written earlier; entries are written once", short, what)})
		}
		if len(c.parents) > 1 {
			for _, f := range ch.novel {
				out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("merge commit %s adds a file neither parent has; a merge only joins two ledgers", short)})
			}
			continue
		}
		var sig *sigInfo
		for _, f := range ch.novel {
			if !isEntryPath(f.path) {
				continue
			}
			raw, err := s.src.readBlob(f.hash)
			if err != nil {
				return nil, nil, err
			}
			e, err := parseStored(f.path, raw)
			if err == nil {
				err = e.check()
			}
			if err == nil && EntryPath(e.Target, e.Kind, e.ID) != f.path {
				err = fmt.Errorf("entry %s belongs at %s", e.ID, EntryPath(e.Target, e.Kind, e.ID))
			}
			if err != nil {
				out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("commit %s adds an entry that is not well-formed: %v", short, err)})
				continue
			}
			switch e.Kind {
			case KindProposal:
				proposed[e.PatchID] = Proposed{Target: e.Target, Commit: e.Commit, Pin: e.Pin}
			case KindVerdict, KindStarted:
				// A started entry counts as much as a verdict: without
				// its verdict it is the attempt's outcome (cancelled).
				if !s.Trust.Configured() {
					continue
				}
				if sig == nil {
					info := checkSignature(c)
					sig = &info
				}
				if sg := s.Trust.judge(h, *sig); !sg.Trusted {
					out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("%s %s was added by commit %s, %s; only verdicts signed by a key %s lists are accepted", e.Kind, e.ID, short, signedBy(sg), s.Trust.File)})
				}
			}
		}
	}
	return out, proposed, nil
}

func signedBy(s Signer) string {
	switch s.Signature {
	case string(signing.Good):
		return "signed by " + s.Fingerprint
	case string(signing.Bad):
		return "whose signature does not verify"
	}
	return "which is not signed"
}

// CheckNotes judges an update of the notes ref: a fast-forward whose new
// commits remove no note line and no note.
func (s *Server) CheckNotes(ctx context.Context, old, new plumbing.Hash) ([]Refusal, error) {
	r, err := s.fastForward(ctx, s.NotesRef, old, new)
	if err != nil || r != nil {
		if r != nil {
			return []Refusal{*r}, nil
		}
		return nil, err
	}
	commits, err := s.newCommits(ctx, old, new)
	if err != nil {
		return nil, err
	}
	var out []Refusal
	for _, h := range commits {
		c, err := s.src.commitInfo(h)
		if err != nil {
			return nil, err
		}
		for _, p := range c.parents {
			pc, err := s.src.commitInfo(p)
			if err != nil {
				return nil, err
			}
			_, gone, err := diffTrees(s.src, pc.tree, c.tree, "")
			if err != nil {
				return nil, err
			}
			for _, g := range gone {
				if g.deleted {
					out = append(out, Refusal{Ref: s.NotesRef, Path: g.path, Rule: fmt.Sprintf("commit %s removes a note; notes are only appended to", git.Short(h.String()))})
					continue
				}
				if lost, err := s.lostLine(pc.tree, c.tree, g.path); err != nil || lost != "" {
					if err != nil {
						return nil, err
					}
					out = append(out, Refusal{Ref: s.NotesRef, Path: g.path, Rule: fmt.Sprintf("commit %s removes the note line %q; notes are only appended to", git.Short(h.String()), errs.Clip(lost))})
				}
			}
		}
	}
	return out, nil
}

// lostLine returns a line the note at path had in tree old and lacks in
// tree cur, or "".
func (s *Server) lostLine(old, cur plumbing.Hash, path string) (string, error) {
	read := func(tree plumbing.Hash) (string, error) {
		h, ok, err := lookupIn(s.src, tree, path)
		if err != nil || !ok {
			return "", err
		}
		b, err := s.src.readBlob(h)
		return string(b), err
	}
	was, err := read(old)
	if err != nil {
		return "", err
	}
	now, err := read(cur)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(was, "\n") {
		if line != "" && !hasLine(now, line) {
			return line, nil
		}
	}
	return "", nil
}

// lookupIn finds the blob at a slash-separated path under tree root.
func lookupIn(src source, root plumbing.Hash, p string) (plumbing.Hash, bool, error) {
	h := root
	for _, name := range strings.Split(p, "/") {
		entries, err := treeEntries(src, h)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		found := false
		for _, e := range entries {
			if e.Name == name {
				h, found = e.Hash, true
				break
			}
		}
		if !found {
			return plumbing.ZeroHash, false, nil
		}
	}
	return h, true, nil
}

// FindProposal looks for the proposal of patchID on the ledger at tip, for
// a patch ref pushed without its proposal. It reads every proposal entry,
// so it is only for that case.
func (s *Server) FindProposal(ctx context.Context, tip plumbing.Hash, patchID string) (*Proposed, error) {
	if tip.IsZero() {
		return nil, nil
	}
	c, err := s.src.commitInfo(tip)
	if err != nil {
		return nil, err
	}
	files, err := listFiles(s.src, c.tree, "")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "looking for the proposal of %s interrupted", patchID)
		}
		if !isEntryPath(f.path) || pathKind(f.path) != KindProposal {
			continue
		}
		raw, err := s.src.readBlob(f.hash)
		if err != nil {
			return nil, err
		}
		if e, err := parseStored(f.path, raw); err == nil && e.PatchID == patchID {
			return &Proposed{Target: e.Target, Commit: e.Commit, Pin: e.Pin}, nil
		}
	}
	return nil, nil
}

func pathKind(p string) Kind {
	segs := strings.Split(p, "/")
	if len(segs) != 4 {
		return ""
	}
	return Kind(segs[1])
}
