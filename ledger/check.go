package ledger

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

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
	// Pushers is whom the server authenticated for this push (nil: no
	// one; inboxes are then bound by runners' keys only).
	Pushers *Pushers
	// Repository is the identity the protected base names ([runner]
	// repository), or "".
	Repository string
	// Retiring are the writer ids whose inboxes this push deletes with a
	// maintainer's retirement, which the caller checked.
	Retiring map[string]bool

	cat *git.CatFile
	src reader
	// inbox: Branch is a writer's inbox, whose history is that writer's
	// own; the order entries arrived in is the ledger branch's, which
	// folds take as their first parent.
	inbox bool
	// known is the ledger branch an inbox is folded into: the commits it
	// already holds were judged when they reached it, so an inbox that
	// carries them (a writer's pull folds the branch in) is judged only by
	// what is new.
	known string
	// heldByInboxes: the commits the writers' inbox ledgers hold are not
	// judged again (CheckBranch).
	heldByInboxes bool
}

// Refusal is one reason a push of the ledger's refs is refused.
type Refusal struct {
	Ref, Path, Rule string
}

// Proposed is a proposal on the ledger or in a pushed update: what a pushed
// patch ref must agree with.
type Proposed struct {
	ID, Target, Commit, Pin string
}

func proposedOf(e *Stored) Proposed {
	return Proposed{ID: e.ID, Target: e.Target, Commit: e.Commit, Pin: e.Pin}
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
	if s.known != "" {
		if tip, err := git.Output(ctx, s.Dir, "rev-parse", "--verify", "--quiet", "--end-of-options", s.known+"^{commit}"); err == nil && tip != "" {
			args = append(args, "^"+tip)
		}
	}
	if s.heldByInboxes {
		// What a writer's inbox holds was judged when it arrived; a fold
		// that brings it to the branch or to another inbox is judged by
		// what it adds itself.
		out, err := git.Output(ctx, s.Dir, "for-each-ref", "--format=%(objectname) %(refname)", InboxRefPrefix)
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot list the inboxes")
		}
		for _, line := range strings.Split(out, "\n") {
			h, ref, ok := strings.Cut(line, " ")
			if _, what, isInbox := ParseInboxRef(ref); ok && isInbox && what == "ledger" && plumbing.IsHash(h) {
				args = append(args, "^"+h)
			}
		}
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

// onFirstParents refuses a ledger update whose first-parent history does
// not pass through the old tip: the server's first-parent history is the
// order entries arrived in, and a push may only add to its end (hone
// ledger push merges with the remote's tip as the first parent).
func (s *Server) onFirstParents(ctx context.Context, old, new plumbing.Hash) (*Refusal, error) {
	if old.IsZero() || old == new || s.inbox {
		return nil, nil
	}
	if on, err := onFirstParentLine(ctx, s.Dir, old, new); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the pushed commits")
	} else if on {
		return nil, nil
	}
	return &Refusal{Ref: s.Branch, Rule: fmt.Sprintf("%s does not have %s on its first-parent history: a merge must take the server's tip as its first parent, so that the ledger's history stays the order entries arrived in (hone ledger push does)", git.Short(new.String()), git.Short(old.String()))}, nil
}

// onFirstParentLine reports whether old is on the first-parent history of
// new, in the repository at dir: what the server requires of the ledger
// branch, and what a push checks before offering it.
func onFirstParentLine(ctx context.Context, dir string, old, new plumbing.Hash) (bool, error) {
	out, err := git.Output(ctx, dir, "rev-list", "--first-parent", "--parents", new.String(), "^"+old.String())
	if err != nil {
		return false, err
	}
	lines := strings.Split(out, "\n")
	f := strings.Fields(lines[len(lines)-1])
	return len(f) >= 2 && f[1] == old.String(), nil
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
	if r, err := s.onFirstParents(ctx, old, new); err != nil || r != nil {
		if r != nil {
			out = append(out, *r)
		}
		return out, nil, err
	}
	withInboxes := *s
	withInboxes.heldByInboxes = true
	commits, err := withInboxes.newCommits(ctx, old, new)
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
		added := make(map[string]bool, len(ch.novel))
		for _, f := range ch.novel {
			added[f.path] = true
		}
		for _, f := range ch.novel {
			if f.mode != filemode.Regular {
				out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("commit %s adds it with mode %o; every ledger file is a plain file (100644)", short, uint32(f.mode))})
				continue
			}
			if !isEntryPath(f.path) {
				switch attachmentOrReadme(f.path, added) {
				case fileStray:
					out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("commit %s adds a file that is not an entry (<target>/<kind>/<hh>/<id>.toml), an attachment beside one (<id>.<name>) or the README; the ledger branch holds nothing else", short)})
				case fileLateAttachment:
					out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("commit %s adds an attachment without its entry; an attachment is written by the commit that adds its entry, never later", short)})
				}
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
				if prev, dup := proposed[e.PatchID]; dup {
					out = append(out, Refusal{Ref: s.Branch, Path: f.path, Rule: fmt.Sprintf("proposal %s is a second proposal of patch %s in one push (the first is %s); a patch is proposed once", e.ID, e.PatchID, prev.ID)})
					continue
				}
				proposed[e.PatchID] = proposedOf(e)
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

// Proposals returns every proposal on the ledger at tip by patch id (the
// first in path order where a ledger, written before the server refused
// them, holds two). It reads every proposal entry: a push that adds
// proposals or patch refs pays for it once.
func (s *Server) Proposals(ctx context.Context, tip plumbing.Hash) (map[string]Proposed, error) {
	out := map[string]Proposed{}
	err := s.eachEntry(ctx, tip, KindProposal, func(e *Stored) {
		if _, ok := out[e.PatchID]; !ok {
			out[e.PatchID] = proposedOf(e)
		}
	})
	return out, err
}

// eachEntry calls fn with every well-formed entry of kind on the ledger at
// tip (zero: none).
func (s *Server) eachEntry(ctx context.Context, tip plumbing.Hash, kind Kind, fn func(*Stored)) error {
	if tip.IsZero() {
		return nil
	}
	c, err := s.src.commitInfo(tip)
	if err != nil {
		return err
	}
	files, err := listFiles(s.src, c.tree, "")
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return errs.Wrap(errs.Failure, err, "reading the ledger's %s entries interrupted", kind)
		}
		if !isEntryPath(f.path) || pathKind(f.path) != kind {
			continue
		}
		raw, err := s.src.readBlob(f.hash)
		if err != nil {
			return err
		}
		if e, err := parseStored(f.path, raw); err == nil {
			fn(e)
		}
	}
	return nil
}

// What a ledger file that is not an entry is to the commit that adds it.
const (
	fileOK             = iota // the README, or an attachment the commit adds with its entry
	fileStray                 // neither the README nor named like an attachment
	fileLateAttachment        // named like an attachment, but its entry is not added with it
)

// attachmentOrReadme judges p, a file a commit adds that is not an entry:
// the README, or an attachment <id>.<name> beside an entry <id>.toml that
// the same commit adds (added holds every path it adds). An attachment
// added later, by anyone, is refused: whoever wrote an entry wrote all of
// it, and nobody else may put a file beside it that another ledger could
// hold with other bytes.
func attachmentOrReadme(p string, added map[string]bool) int {
	if p == "README.md" {
		return fileOK
	}
	dir, name := path.Split(p)
	id, att, ok := strings.Cut(name, ".")
	if !ok || !validID(id) || !validName(att) || strings.Count(p, "/") != 3 {
		return fileStray
	}
	if !added[dir+id+".toml"] {
		return fileLateAttachment
	}
	return fileOK
}

func pathKind(p string) Kind {
	segs := strings.Split(p, "/")
	if len(segs) != 4 {
		return ""
	}
	return Kind(segs[1])
}

// CheckNoteLines refuses every line the notes update from old to new adds
// that is not the note line of a verdict entry on the ledger at ledgerTip
// (the ledger as it will be after the push) on the object the note
// annotates: a note says only what an entry says.
func (s *Server) CheckNoteLines(ctx context.Context, old, new, ledgerTip plumbing.Hash) ([]Refusal, error) {
	if new.IsZero() {
		return nil, nil
	}
	before, err := s.noteLines(old)
	if err != nil {
		return nil, err
	}
	after, err := s.noteLines(new)
	if err != nil {
		return nil, err
	}
	want := map[string]map[string]bool{}
	err = s.eachEntry(ctx, ledgerTip, KindVerdict, func(e *Stored) {
		if want[e.Commit] == nil {
			want[e.Commit] = map[string]bool{}
		}
		want[e.Commit][NoteLine(&e.Common)] = true
	})
	if err != nil {
		return nil, err
	}
	var out []Refusal
	for obj, lines := range after {
		for line := range lines {
			if before[obj][line] || want[obj][line] {
				continue
			}
			out = append(out, Refusal{Ref: s.NotesRef, Path: obj, Rule: fmt.Sprintf("the note line %q on %s matches no verdict entry of the ledger; notes only repeat what verdict entries say", errs.Clip(line), git.Short(obj))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path+out[i].Rule < out[j].Path+out[j].Rule })
	return out, nil
}

// noteLines reads every note of the notes commit h (zero: none) as the
// set of its lines, by the object it annotates, whatever the fan-out.
func (s *Server) noteLines(h plumbing.Hash) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	if h.IsZero() {
		return out, nil
	}
	c, err := s.src.commitInfo(h)
	if err != nil {
		return nil, err
	}
	files, err := listFiles(s.src, c.tree, "")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := s.src.readBlob(f.hash)
		if err != nil {
			return nil, err
		}
		obj := strings.ReplaceAll(f.path, "/", "")
		if out[obj] == nil {
			out[obj] = map[string]bool{}
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line != "" {
				out[obj][line] = true
			}
		}
	}
	return out, nil
}
