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

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/signing"
)

// Problem kinds reported by Verify.
const (
	ProblemModified      = "modified"         // a commit changed a file an earlier commit wrote
	ProblemDeleted       = "deleted"          // a commit removed a file an earlier commit wrote
	ProblemRewritten     = "rewritten"        // the branch no longer contains a tip hone recorded
	ProblemMergeAdded    = "merge-added"      // a merge commit added a file neither parent had
	ProblemMalformed     = "malformed"        // an entry that is not valid TOML or lacks required fields
	ProblemMisplaced     = "misplaced"        // an entry not at <target>/<kind>/<hh>/<id>.toml of its own fields
	ProblemStray         = "stray"            // a file that is neither an entry, an attachment, nor the README
	ProblemMissingPatch  = "missing-patch"    // a proposal whose refs/hone/patches/<id> is absent or elsewhere
	ProblemDiffMismatch  = "diff-mismatch"    // a proposal whose patch commit's canonical diff has another hash
	ProblemMissingNote   = "missing-note"     // a verdict entry without its line in the notes
	ProblemNoteMismatch  = "note-mismatch"    // a hone note line that differs from its verdict entry
	ProblemOrphanNote    = "orphan-note"      // a hone note line naming no verdict entry
	ProblemUnreadableRef = "unreadable-ref"   // the branch or notes ref does not hold a readable commit
	ProblemBadSignature  = "bad-signature"    // a ledger commit whose signature does not verify
	ProblemUnsigned      = "unsigned"         // with --require-signed: a verdict added by an unsigned commit
	ProblemUntrusted     = "untrusted-signer" // with --require-signed: a verdict signed by a key allowed_signers does not list
	ProblemForeign       = "other-repository" // with --require-signed: a verdict judged for another repository than [runner] repository names
)

// Problem is one thing Verify found wrong. Path is a path on the ledger
// branch, "notes:<path>" for a file of the notes ref, or a ref name.
type Problem struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// VerifyReport is what Verify checked and found.
type VerifyReport struct {
	Branch   string `json:"branch"`
	Tip      string `json:"tip,omitempty"`    // empty when the ledger does not exist yet
	Anchor   string `json:"anchor,omitempty"` // the tip hone last wrote, pulled, pushed or verified
	Commits  int    `json:"commits"`
	Entries  int    `json:"entries"`
	Notes    int    `json:"notes"` // hone note lines seen
	Verdicts int    `json:"verdicts"`
	// Signed counts the verdicts a trusted key signed (every verdict counts
	// as trusted when no allowed_signers are configured).
	Trusted int `json:"trusted"`
	// SignersConfigured: [ledger] allowed_signers is set at the protected
	// base; without it every verdict counts, signed or not.
	SignersConfigured bool      `json:"signers_configured"`
	Problems          []Problem `json:"problems"`

	missingNotes []*Stored // verdicts whose note line is absent: what RepairNotes adds
}

func (r *VerifyReport) add(kind, p, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Kind: kind, Path: p, Message: fmt.Sprintf(format, args...)})
}

// VerifyOptions adjust Verify.
type VerifyOptions struct {
	// RequireSigned reports every verdict not signed by a key the protected
	// base's allowed_signers lists.
	RequireSigned bool
	// Repair means the caller is repairing: a clean result does not move the
	// anchor, so a repair can never bless a rewritten history.
	Repair bool
}

// Verify proves the ledger sound: an append of every tip hone recorded
// (its anchor, the branch's reflog, the remote-tracking ledgers);
// append-only over the whole history of the branch (no commit, merges
// included, modified or deleted a file any parent had, and no merge added
// one of its own); every entry well-formed and stored under its own target,
// kind and id; every proposal's patch commit present with the diff hash it
// recorded; the hone lines of the notes equal to the verdict entries;
// every signature good; and every writer's inbox the last pull fetched
// held to the rules the remote's pre-receive holds inboxes to (see
// verifyInboxes). Every signature is checked afresh, without the caches
// listings use. Problems are returned in the report; err is only for
// failing to look. A clean report moves the anchor to the tip.
func (l *Ledger) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	rep := &VerifyReport{Branch: l.ws.Config.Ledger.Branch, Problems: []Problem{}}
	tip, ok, err := l.refs.Read(l.branchRef())
	if err != nil {
		rep.add(ProblemUnreadableRef, l.branchRef(), "%v", err)
		return rep, nil
	}
	adder := map[string]plumbing.Hash{}
	if ok {
		rep.Tip = tip.String()
		var reachable map[plumbing.Hash]bool
		if adder, reachable, err = l.verifyHistory(ctx, tip, rep); err != nil {
			return nil, err
		}
		if err := l.verifyRecords(ctx, tip, reachable, rep); err != nil {
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
	if err := l.verifySigners(ctx, entries, adder, opts, rep); err != nil {
		return nil, err
	}
	if err := l.verifyInboxes(ctx, rep); err != nil {
		return nil, err
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rep.Problems[i].Path < rep.Problems[j].Path })
	if ok && len(rep.Problems) == 0 && !opts.Repair {
		if err := l.advanceAnchor(ctx, plumbing.ZeroHash, tip); err != nil {
			return nil, err
		}
		rep.Anchor = tip.String()
	}
	return rep, nil
}

// verifyHistory checks every commit reachable from tip against each parent,
// and returns the commit that added each file of the tip, and the commits
// it walked.
func (l *Ledger) verifyHistory(ctx context.Context, tip plumbing.Hash, rep *VerifyReport) (map[string]plumbing.Hash, map[plumbing.Hash]bool, error) {
	adder := map[string]plumbing.Hash{}
	reachable := map[plumbing.Hash]bool{}
	err := walk(ctx, l.obj, tip, nil, func(ch *change) (bool, error) {
		rep.Commits++
		reachable[ch.hash] = true
		for _, g := range ch.gone {
			if g.deleted {
				rep.add(ProblemDeleted, g.path, "commit %s removed this file", ch.hash)
			} else {
				rep.add(ProblemModified, g.path, "commit %s changed this file", ch.hash)
			}
		}
		for _, f := range ch.novel {
			if len(ch.parents) > 1 {
				rep.add(ProblemMergeAdded, f.path, "merge commit %s added this file, which neither parent had; a merge only joins two ledgers", ch.hash)
			}
			if _, seen := adder[f.path]; !seen {
				adder[f.path] = ch.hash
			}
		}
		return true, nil
	})
	return adder, reachable, err
}

// verifySigners checks the signature of every commit that added a verdict,
// afresh, and with RequireSigned reports each verdict no allowed signer
// signed.
func (l *Ledger) verifySigners(ctx context.Context, entries map[string]*Stored, adder map[string]plumbing.Hash, opts VerifyOptions, rep *VerifyReport) error {
	tr, err := l.trust(ctx)
	if err != nil {
		return err
	}
	rep.SignersConfigured = tr.Configured()
	for _, s := range sortedEntries(entries) {
		if s.Kind != KindVerdict {
			continue
		}
		rep.Verdicts++
		h := adder[s.Path]
		info := sigInfo{status: signing.Unsigned}
		if !h.IsZero() {
			c, err := l.obj.commitInfo(h)
			if err != nil {
				return err
			}
			info = checkSignature(c)
		}
		sg := tr.judge(h, info)
		switch {
		case sg.Signature == string(signing.Bad):
			rep.add(ProblemBadSignature, s.Path, "verdict %s was added by commit %s, whose signature does not verify", s.ID, h)
		case !opts.RequireSigned:
		case !tr.Configured():
			rep.add(ProblemUntrusted, s.Path, "verdict %s cannot be trusted: no [ledger] allowed_signers is configured at the protected base", s.ID)
		case sg.Signature == string(signing.Unsigned):
			rep.add(ProblemUnsigned, s.Path, "verdict %s was added by commit %s, which is not signed", s.ID, h)
		case !sg.Trusted:
			rep.add(ProblemUntrusted, s.Path, "verdict %s was signed by %s, which %s does not list", s.ID, sg.Fingerprint, tr.File)
		case tr.foreign(s.Repository):
			rep.add(ProblemForeign, s.Path, "verdict %s was judged for repository %q, not this one (%q, [runner] repository at the protected base), so it does not count here, whoever signed it", s.ID, s.Repository, tr.Repository)
		}
		if sg.Trusted && sg.Signature != string(signing.Bad) && !tr.foreign(s.Repository) {
			rep.Trusted++
		}
	}
	return nil
}

// verifyEntries checks every file of the tip's tree and returns the entries
// that parsed, by id.
func (l *Ledger) verifyEntries(tree plumbing.Hash, rep *VerifyReport) (map[string]*Stored, error) {
	files, err := listFiles(l.obj, tree, "")
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
		var e legacyEntry
		if _, err := toml.Decode(string(raw), &e); err != nil {
			rep.add(ProblemMalformed, f.path, "not valid TOML: %v", err)
			continue
		}
		e.deriveFlags()
		s := &Stored{Common: e.Common, Path: f.path, Raw: raw}
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
