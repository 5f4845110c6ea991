package ledger

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// Problem kinds reported by Verify.
const (
	ProblemModified      = "modified"       // a commit changed a file an earlier commit wrote
	ProblemDeleted       = "deleted"        // a commit removed a file an earlier commit wrote
	ProblemMalformed     = "malformed"      // an entry that is not valid TOML or lacks required fields
	ProblemMisplaced     = "misplaced"      // an entry not at <target>/<kind>/<hh>/<id>.toml of its own fields
	ProblemStray         = "stray"          // a file that is neither an entry, an attachment, nor the README
	ProblemMissingPatch  = "missing-patch"  // a proposal whose refs/hone/patches/<id> is absent or elsewhere
	ProblemDiffMismatch  = "diff-mismatch"  // a proposal whose patch commit's canonical diff has another hash
	ProblemMissingNote   = "missing-note"   // a verdict entry without its line in the notes
	ProblemNoteMismatch  = "note-mismatch"  // a hone note line that differs from its verdict entry
	ProblemOrphanNote    = "orphan-note"    // a hone note line naming no verdict entry
	ProblemUnreadableRef = "unreadable-ref" // the branch or notes ref does not hold a readable commit
)

// Problem is one thing Verify found wrong. Path is a path on the ledger
// branch, or "notes:<path>" for a file of the notes ref.
type Problem struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Branch   string    `json:"branch"`
	Tip      string    `json:"tip,omitempty"` // empty when the ledger does not exist yet
	Commits  int       `json:"commits"`
	Entries  int       `json:"entries"`
	Notes    int       `json:"notes"` // hone note lines seen
	Problems []Problem `json:"problems"`

	missingNotes []*Stored // verdicts whose note line is absent: what RepairNotes adds
}

func (r *VerifyReport) add(kind, p, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Kind: kind, Path: p, Message: fmt.Sprintf(format, args...)})
}

// Verify proves the ledger sound: append-only over the whole history of the
// branch (no commit, merges included, modified or deleted a file any parent
// had), every entry well-formed and stored under its own target, kind and id,
// every proposal's patch commit present with the diff hash it recorded, and
// the hone lines of the notes equal to the verdict entries. Problems are
// returned in the report; err is only for failing to look.
func (l *Ledger) Verify(ctx context.Context) (*VerifyReport, error) {
	rep := &VerifyReport{Branch: l.ws.Config.Ledger.Branch, Problems: []Problem{}}
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil {
		rep.add(ProblemUnreadableRef, l.branchRef(), "%v", err)
		return rep, nil
	}
	if ok {
		rep.Tip = tip.String()
		if err := l.verifyHistory(ctx, tip, rep); err != nil {
			return nil, err
		}
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return nil, err
	}
	entries, err := l.verifyEntries(tree, rep)
	if err != nil {
		return nil, err
	}
	if err := l.verifyPatches(ctx, entries, rep); err != nil {
		return nil, err
	}
	if err := l.verifyNotes(entries, rep); err != nil {
		return nil, err
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Path < rep.Problems[j].Path })
	return rep, nil
}

// verifyHistory checks every commit reachable from tip against each parent.
func (l *Ledger) verifyHistory(ctx context.Context, tip plumbing.Hash, rep *VerifyReport) error {
	seen := map[plumbing.Hash]bool{tip: true}
	queue := []plumbing.Hash{tip}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return errs.Wrap(errs.Failure, err, "ledger: verify interrupted")
		}
		c, err := object.GetCommit(l.obj.st, queue[0])
		if err != nil {
			return errs.Wrap(errs.Failure, err, "cannot read ledger commit %s", queue[0])
		}
		queue = queue[1:]
		rep.Commits++
		for _, p := range c.ParentHashes {
			pt, err := l.obj.commitTree(p)
			if err != nil {
				return err
			}
			if err := l.lostFiles(pt, c.TreeHash, "", c.Hash, rep); err != nil {
				return err
			}
			if !seen[p] {
				seen[p] = true
				queue = append(queue, p)
			}
		}
	}
	return nil
}

// lostFiles reports each file of tree old that tree cur changed or removed.
func (l *Ledger) lostFiles(old, cur plumbing.Hash, prefix string, commit plumbing.Hash, rep *VerifyReport) error {
	if old == cur {
		return nil
	}
	oldE, err := l.obj.tree(old)
	if err != nil {
		return err
	}
	curE, err := l.obj.tree(cur)
	if err != nil {
		return err
	}
	byName := make(map[string]object.TreeEntry, len(curE))
	for _, e := range curE {
		byName[e.Name] = e
	}
	for _, o := range oldE {
		n, ok := byName[o.Name]
		switch {
		case ok && n.Hash == o.Hash && n.Mode == o.Mode:
		case ok && o.Mode == filemode.Dir && n.Mode == filemode.Dir:
			if err := l.lostFiles(o.Hash, n.Hash, prefix+o.Name+"/", commit, rep); err != nil {
				return err
			}
		case ok && o.Mode != filemode.Dir && n.Mode != filemode.Dir:
			rep.add(ProblemModified, prefix+o.Name, "commit %s changed this file", commit)
		default:
			files := []file{{path: prefix + o.Name}}
			if o.Mode == filemode.Dir {
				if files, err = l.allFiles(o.Hash, prefix+o.Name+"/"); err != nil {
					return err
				}
			}
			for _, f := range files {
				rep.add(ProblemDeleted, f.path, "commit %s removed this file", commit)
			}
		}
	}
	return nil
}

// verifyEntries checks every file of the tip's tree and returns the entries
// that parsed, by id.
func (l *Ledger) verifyEntries(tree plumbing.Hash, rep *VerifyReport) (map[string]*Stored, error) {
	files, err := l.allFiles(tree, "")
	if err != nil {
		return nil, err
	}
	entries := map[string]*Stored{}
	isEntry := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f.path, ".toml") {
			continue
		}
		isEntry[strings.TrimSuffix(f.path, ".toml")] = true
		if !isEntryPath(f.path) {
			rep.add(ProblemStray, f.path, "a .toml file outside <target>/<kind>/<hh>/")
			continue
		}
		raw, err := l.obj.readBlob(f.hash)
		if err != nil {
			return nil, err
		}
		rep.Entries++
		s := &Stored{Path: f.path, Raw: raw}
		if _, err := toml.Decode(string(raw), &s.Common); err != nil {
			rep.add(ProblemMalformed, f.path, "not valid TOML: %v", err)
			continue
		}
		if err := s.check(); err != nil {
			rep.add(ProblemMalformed, f.path, "%v", err)
			continue
		}
		if want := EntryPath(s.Target, s.Kind, s.ID); want != f.path {
			rep.add(ProblemMisplaced, f.path, "entry %s (%s, target %s) belongs at %s", s.ID, s.Kind, s.Target, want)
			continue
		}
		entries[s.ID] = s
	}
	for _, f := range files {
		if f.path == "README.md" || strings.HasSuffix(f.path, ".toml") {
			continue
		}
		dir, name := path.Split(f.path)
		id, _, _ := strings.Cut(name, ".")
		if !isEntry[dir+id] {
			rep.add(ProblemStray, f.path, "not an entry, not an attachment (<id>.<name>) of an entry beside it, not the README")
		}
	}
	return entries, nil
}

// verifyPatches checks each proposal's patch ref and diff hash. Each
// distinct (pin, commit) diff is computed once, a few git processes at a time.
func (l *Ledger) verifyPatches(ctx context.Context, entries map[string]*Stored, rep *VerifyReport) error {
	type check struct {
		s      *Stored
		commit string
	}
	var checks []check
	diffs := map[[2]string]*diffSum{}
	for _, s := range sortedEntries(entries) {
		if s.Kind != KindProposal {
			continue
		}
		ref := PatchRef(s.PatchID)
		h, ok, err := l.refs.Read(ref)
		switch {
		case err != nil || !ok:
			rep.add(ProblemMissingPatch, s.Path, "proposal %s: %s does not exist; fetch it with `hone ledger pull`", s.ID, ref)
		case s.Commit != "" && h.String() != s.Commit:
			rep.add(ProblemMissingPatch, s.Path, "proposal %s recorded commit %s but %s holds %s", s.ID, s.Commit, ref, h)
		case s.DiffSHA256 == "":
			rep.add(ProblemMalformed, s.Path, "proposal %s records no diff_sha256", s.ID)
		case s.Pin == "":
			rep.add(ProblemMalformed, s.Path, "proposal %s records no pin", s.ID)
		default:
			checks = append(checks, check{s, h.String()})
			diffs[[2]string{s.Pin, h.String()}] = &diffSum{}
		}
	}
	l.diffAll(ctx, diffs)
	for _, c := range checks {
		d := diffs[[2]string{c.s.Pin, c.commit}]
		switch {
		case d.err != nil:
			rep.add(ProblemMissingPatch, c.s.Path, "proposal %s: cannot diff %s..%s: %v", c.s.ID, c.s.Pin, c.commit, d.err)
		case d.sum != c.s.DiffSHA256:
			rep.add(ProblemDiffMismatch, c.s.Path, "proposal %s recorded diff_sha256 %s but %s..%s hashes to %s", c.s.ID, c.s.DiffSHA256, c.s.Pin, c.commit, d.sum)
		}
	}
	return nil
}

type diffSum struct {
	sum string
	err error
}

// diffAll fills in the canonical diff hash of every (pin, commit) pair.
func (l *Ledger) diffAll(ctx context.Context, diffs map[[2]string]*diffSum) {
	work := make(chan [2]string)
	var wg sync.WaitGroup
	for range min(4, len(diffs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				d := diffs[k] // each key is handled by one worker only
				d.sum, d.err = git.CanonicalDiffSHA256(ctx, l.ws.Root, k[0], k[1])
			}
		}()
	}
	for k := range diffs {
		work <- k
	}
	close(work)
	wg.Wait()
}

func sortedEntries(m map[string]*Stored) []*Stored {
	out := make([]*Stored, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
