package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/signing"
)

// Update is one ref update a server receives; a zero hash is "none".
type Update struct {
	Ref      string
	Old, New plumbing.Hash
}

// fleetCheck is one push's check of the fleet's rules.
type fleetCheck struct {
	s       *Server
	updates []Update
	now     time.Time
	out     []Refusal
	judged  map[string][]string // patch id -> verdict words on the server's ledger refs, read once when needed
}

// CheckFleet judges the updates of one push against the runner fleet's rules
// (ledger/FORMAT.md, "Runner fleet"), s.Branch and s.NotesRef being the
// server's ledger refs:
//   - a writer's inbox refs are held to the ledger branch's and the notes'
//     rules (appends only, verdicts signed by an allowed signer), and to
//     their writer: a runner's key, or the identity the server
//     authenticated (see bound);
//   - a claim is created only by an allowed signer (any signer without
//     allowed_signers), renewed only by the one who holds it, taken over
//     only once its lease expired, always by a commit whose parent is the
//     claim it replaces, and deleted only together with a verdict on its
//     patch by its holder;
//   - a verdict new to the server on a claimed patch comes with the release
//     of that claim by the claim's signer, and one on a patch the server's
//     ledger already has a verdict on (other than error) is refused, claimed
//     or not, unless a person's --rejudge wrote it; nor is such a patch
//     claimed again;
//   - a runner's record is written by its own signer only and never deleted;
//   - nothing under PushersRefPrefix is pushed: the server writes it;
//   - no ledger ref is given a file that the branch or any inbox already
//     holds, or that another ref of the same push brings, with other
//     bytes: every fold of every writer takes the union of them all, so
//     one such path would stop every fold that meets both.
//
// It returns the refusals and the proposals the inbox updates add, by
// patch id.
func (s *Server) CheckFleet(ctx context.Context, updates []Update, now time.Time) ([]Refusal, map[string]Proposed, error) {
	fc := &fleetCheck{s: s, updates: updates, now: now}
	proposed := map[string]Proposed{}
	var ledgerUpdates []Update
	for _, u := range updates {
		switch {
		case u.Ref == s.Branch:
			ledgerUpdates = append(ledgerUpdates, u)
		case strings.HasPrefix(u.Ref, InboxRefPrefix):
			props, err := fc.inbox(ctx, u)
			if err != nil {
				return nil, nil, err
			}
			for id, p := range props {
				proposed[id] = p
			}
			if _, what, ok := ParseInboxRef(u.Ref); ok && what == "ledger" {
				ledgerUpdates = append(ledgerUpdates, u)
			}
		case strings.HasPrefix(u.Ref, ClaimRefPrefix):
			if err := fc.claim(ctx, u); err != nil {
				return nil, nil, err
			}
		case strings.HasPrefix(u.Ref, RunnerRefPrefix):
			if err := fc.runnerRecord(u); err != nil {
				return nil, nil, err
			}
		case strings.HasPrefix(u.Ref, PushersRefPrefix):
			fc.refuse(u.Ref, "%s is the server's own record of whom it authenticated for each proposal; no push writes or deletes it", PushersRef)
		}
	}
	if err := fc.conflicts(ctx, ledgerUpdates); err != nil {
		return nil, nil, err
	}
	if err := fc.verdicts(ctx, ledgerUpdates); err != nil {
		return nil, nil, err
	}
	return fc.out, proposed, nil
}

// refuseVerdict refuses verdict v where the push brings it: on the
// ledger ref, at its path, so that its writer can tell which entry.
func (fc *fleetCheck) refuseVerdict(v newVerdict, format string, args ...any) {
	fc.out = append(fc.out, Refusal{Ref: v.ref, Path: v.path, Rule: fmt.Sprintf(format, args...)})
}

func (fc *fleetCheck) refuse(ref, format string, args ...any) {
	fc.out = append(fc.out, Refusal{Ref: ref, Rule: fmt.Sprintf(format, args...)})
}

// inbox holds an inbox ref to the rules of the ref it copies.
func (fc *fleetCheck) inbox(ctx context.Context, u Update) (map[string]Proposed, error) {
	writer, what, ok := ParseInboxRef(u.Ref)
	if !ok {
		fc.refuse(u.Ref, "an inbox holds only <writer-id>/ledger and <writer-id>/notes")
		return nil, nil
	}
	if ok, err := fc.bound(ctx, u, writer, what); err != nil || !ok {
		return nil, err
	}
	sub := *fc.s
	if what == "notes" {
		sub.NotesRef = u.Ref
		rs, err := sub.CheckNotes(ctx, u.Old, u.New)
		if err != nil || len(rs) > 0 {
			fc.out = append(fc.out, rs...)
			return nil, err
		}
		// Every fold merges this inbox's notes into its notes ref, which
		// the server holds to the lines of verdict entries: so is the
		// inbox, against its writer's ledger as the push leaves it.
		tip, held, err := fc.ref(ctx, InboxLedgerRef(writer))
		if err != nil {
			return nil, err
		}
		for _, o := range fc.updates {
			if o.Ref == InboxLedgerRef(writer) {
				tip, held = o.New, !o.New.IsZero()
			}
		}
		if !held {
			if tip, _, err = fc.ref(ctx, fc.s.Branch); err != nil {
				return nil, err
			}
		}
		rs, err = sub.CheckNoteLines(ctx, u.Old, u.New, tip)
		fc.out = append(fc.out, rs...)
		return nil, err
	}
	sub.Branch, sub.inbox, sub.known = u.Ref, true, fc.s.Branch
	rs, props, err := sub.CheckBranch(ctx, u.Old, u.New)
	fc.out = append(fc.out, rs...)
	return props, err
}

// identity is who wrote a record commit: its key's fingerprint when its
// signature is good, else the name it gives (which nothing proves, and which
// counts only where no allowed signers are configured). trusted says
// whether an allowed signer signed it (true without allowed_signers).
func (fc *fleetCheck) identity(h plumbing.Hash, name string) (id string, trusted bool, err error) {
	c, err := fc.s.src.commitInfo(h)
	if err != nil {
		return "", false, err
	}
	sg := fc.s.Trust.judge(h, checkSignature(c))
	if sg.Signature == string(signing.Good) {
		return "key " + sg.Fingerprint, sg.Trusted, nil
	}
	return "name " + name, sg.Trusted, nil
}

// record reads the record commit h: its message and its parents.
func (fc *fleetCheck) record(h plumbing.Hash) (string, []plumbing.Hash, error) {
	c, err := fc.s.src.commitInfo(h)
	if err != nil {
		return "", nil, err
	}
	return commitMessage(c.raw), c.parents, nil
}

// claim judges one update of refs/hone/claims/<patch-id>.
func (fc *fleetCheck) claim(ctx context.Context, u Update) error {
	id := strings.TrimPrefix(u.Ref, ClaimRefPrefix)
	if !validName(id) || strings.Contains(id, "/") {
		fc.refuse(u.Ref, "a claim is refs/hone/claims/<patch-id>")
		return nil
	}
	if u.New.IsZero() {
		// A release: the verdict check pairs it with its verdict.
		return nil
	}
	msg, parents, err := fc.record(u.New)
	if err != nil {
		return err
	}
	c, err := ParseClaim(id, msg)
	if err != nil {
		fc.refuse(u.Ref, "%v", err)
		return nil
	}
	who, trusted, err := fc.identity(u.New, c.Runner)
	if err != nil {
		return err
	}
	if !trusted {
		fc.refuse(u.Ref, "claim %s is signed by no key %s lists; only runners holding a listed key claim patches", git.Short(u.New.String()), fc.s.Trust.File)
		return nil
	}
	if r := fc.s.Repository; r != "" && c.Repository != r {
		fc.refuse(u.Ref, "claim %s is for repository %q; this server is %q ([runner] repository at its protected base)", git.Short(u.New.String()), c.Repository, r)
		return nil
	}
	// A runner that cannot judge a patch gives it up by renewing its claim
	// with a lease that ends when renewed: that claim has ended before it
	// arrives, and only its holder may push it (below).
	giveUp := !u.Old.IsZero() && c.Expires.Equal(c.Renewed)
	if !c.Expires.After(fc.now) && !giveUp {
		fc.refuse(u.Ref, "claim %s's lease ended at %s, before it arrived", git.Short(u.New.String()), c.Expires.Format(time.RFC3339))
		return nil
	}
	if u.Old.IsZero() {
		if len(parents) != 0 {
			fc.refuse(u.Ref, "a new claim is a commit without parents")
		}
		if w, err := fc.judgedAs(ctx, id); err != nil || w != "" {
			if w != "" {
				fc.refuse(u.Ref, "patch %s already has a %s verdict on this remote; there is nothing left to claim", id, w)
			}
			return err
		}
		return nil
	}
	if len(parents) != 1 || parents[0] != u.Old {
		fc.refuse(u.Ref, "claim %s does not follow %s: a claim moves only to a commit whose parent is the claim it replaces", git.Short(u.New.String()), git.Short(u.Old.String()))
		return nil
	}
	oldMsg, _, err := fc.record(u.Old)
	if err != nil {
		return err
	}
	prev, err := ParseClaim(id, oldMsg)
	if err != nil {
		// An unreadable claim (pushed where no hook ran) holds nothing.
		return nil
	}
	was, _, err := fc.identity(u.Old, prev.Runner)
	if err != nil {
		return err
	}
	switch {
	case was != who && giveUp:
		fc.refuse(u.Ref, "claim %s ends runner %s's lease; only the runner holding a claim gives it up", git.Short(u.New.String()), prev.Runner)
	case was != who && fc.now.Before(prev.Expires):
		fc.refuse(u.Ref, "runner %s holds this claim until %s; another runner takes it over only after its lease expired", prev.Runner, prev.Expires.Format(time.RFC3339))
	}
	return nil
}

// runnerRecord judges one update of refs/hone/runners/<name>.
func (fc *fleetCheck) runnerRecord(u Update) error {
	name := strings.TrimPrefix(u.Ref, RunnerRefPrefix)
	if u.New.IsZero() {
		fc.refuse(u.Ref, "a runner's record is never deleted")
		return nil
	}
	msg, parents, err := fc.record(u.New)
	if err != nil {
		return err
	}
	r, err := ParseRunnerRecord(name, msg)
	if err != nil {
		fc.refuse(u.Ref, "%v", err)
		return nil
	}
	who, trusted, err := fc.identity(u.New, r.Runner)
	if err != nil {
		return err
	}
	switch {
	case !trusted:
		fc.refuse(u.Ref, "runner record %s is signed by no key %s lists", git.Short(u.New.String()), fc.s.Trust.File)
	case u.Old.IsZero():
	case len(parents) != 1 || parents[0] != u.Old:
		fc.refuse(u.Ref, "runner record %s does not follow %s", git.Short(u.New.String()), git.Short(u.Old.String()))
	default:
		was, _, err := fc.identity(u.Old, name)
		if err != nil {
			return err
		}
		if was != who {
			fc.refuse(u.Ref, "runner %s's record is moved by its own key only", name)
		}
	}
	return nil
}

// newVerdict is a verdict entry a push brings to the server.
type newVerdict struct {
	ref, path, patch, word, repository string
	// rejudge: a person's --rejudge wrote it, which comes without a
	// claim; it is bound to the repository all the same.
	rejudge bool
	started bool // a started entry: the attempt's outcome (cancelled) until its verdict comes
	commit  plumbing.Hash
}

// verdicts applies the verdict rules to what the ledger updates bring: the
// verdicts that no ledger ref of the server holds yet.
func (fc *fleetCheck) verdicts(ctx context.Context, ups []Update) error {
	found, err := fc.newVerdicts(ctx, ups)
	if err != nil {
		return err
	}
	released := map[string]Update{}
	for _, u := range fc.updates {
		if id, ok := strings.CutPrefix(u.Ref, ClaimRefPrefix); ok && u.New.IsZero() {
			released[id] = u
		}
	}
	withVerdict := map[string]bool{}
	for _, v := range found {
		ref := ClaimRef(v.patch)
		cur, held, err := fc.ref(ctx, ref)
		if err != nil {
			return err
		}
		if v.started {
			// One replayed from another server would end the attempt
			// here, unjudged.
			if r := fc.s.Repository; v.repository != r {
				fc.refuseVerdict(v, "started entry %s was made for repository %q; this server is %q ([runner] repository at its protected base)", v.path, v.repository, r)
			} else if rel := released[v.patch]; !v.rejudge && (!held || rel.Ref == "" || rel.Old != cur) {
				fc.refuseVerdict(v, "started entry %s comes with the release of no claim on this server; with [runner] repository = %q it is taken only with its verdict, from the runner that claimed its patch here", v.path, r)
			}
			continue
		}
		withVerdict[v.patch] = true
		if held {
			if err := fc.heldVerdict(v, cur, released[v.patch]); err != nil {
				return err
			}
		}
		if r := fc.s.Repository; r != "" {
			switch {
			case v.repository != r:
				fc.refuseVerdict(v, "verdict %s was judged for repository %q; this server is %q ([runner] repository at its protected base)", v.path, v.repository, r)
				continue
			case !held && !v.rejudge:
				fc.refuseVerdict(v, "verdict %s comes with the release of no claim on this server; with [runner] repository = %q a verdict is taken only from the runner that claimed its patch here, so one judged on another server is a replay (hone runner claims first)", v.path, r)
				continue
			}
		}
		if v.rejudge {
			continue
		}
		if w, err := fc.judgedAs(ctx, v.patch); err != nil {
			return err
		} else if w != "" {
			fc.refuseVerdict(v, "patch %s already has a %s verdict on this remote; verdict %s would be its second (one claim, one verdict; a person's --rejudge says why it should be judged again)", v.patch, w, v.path)
		}
	}
	for id, u := range released {
		if !withVerdict[id] {
			fc.refuse(u.Ref, "a claim is released only together with its verdict (hone runner pushes both at once)")
		}
	}
	return nil
}

// judgedAs is the verdict, other than error, the server's ledger refs hold
// on patch, or "".
func (fc *fleetCheck) judgedAs(ctx context.Context, patch string) (string, error) {
	words, err := fc.verdictsOn(ctx, patch)
	for _, w := range words {
		if w != VerdictError {
			return w, err
		}
	}
	return "", err
}

// heldVerdict checks a new verdict on a patch the server holds claim cur on.
func (fc *fleetCheck) heldVerdict(v newVerdict, cur plumbing.Hash, release Update) error {
	msg, _, err := fc.record(cur)
	if err != nil {
		return err
	}
	c, cerr := ParseClaim(v.patch, msg)
	name := ""
	if cerr == nil {
		name = c.Runner
	}
	holder, _, err := fc.identity(cur, name)
	if err != nil {
		return err
	}
	author, _, err := fc.identity(v.commit, name)
	if err != nil {
		return err
	}
	switch {
	case release.Ref == "" || release.Old != cur:
		fc.refuseVerdict(v, "verdict %s is on patch %s, which runner %s holds a claim on; a verdict comes only with the release of the claim its signer holds", v.path, v.patch, name)
	case holder != author:
		fc.refuseVerdict(v, "verdict %s was signed by %s, but the claim on patch %s is held by %s (runner %s); only the claim's holder may judge it", v.path, author, v.patch, holder, name)
	}
	return nil
}

// ref reads one of the server's refs.
func (fc *fleetCheck) ref(ctx context.Context, ref string) (plumbing.Hash, bool, error) {
	out, err := git.Run(ctx, git.Cmd{Dir: fc.s.Dir, Args: []string{"for-each-ref", "--format=%(objectname)", ref}})
	if err != nil {
		return plumbing.ZeroHash, false, errs.Wrap(errs.Failure, err, "cannot read %s", ref)
	}
	h := strings.TrimSpace(string(out))
	if !plumbing.IsHash(h) {
		return plumbing.ZeroHash, false, nil
	}
	return plumbing.NewHash(h), true, nil
}

// ledgerTips are the server's ledger refs as they stand before this push:
// the branch and every writer's inbox ledger.
func (fc *fleetCheck) ledgerTips(ctx context.Context) ([]plumbing.Hash, error) {
	out, err := git.Run(ctx, git.Cmd{Dir: fc.s.Dir, Args: []string{"for-each-ref", "--format=%(objectname) %(refname)", fc.s.Branch, InboxRefPrefix}})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the ledger refs")
	}
	var tips []plumbing.Hash
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		h, ref, ok := strings.Cut(line, " ")
		if !ok || !plumbing.IsHash(h) {
			continue
		}
		if _, what, ok := ParseInboxRef(ref); ref == fc.s.Branch || (ok && what == "ledger") {
			tips = append(tips, plumbing.NewHash(h))
		}
	}
	return tips, nil
}

// newVerdicts lists the verdict entries the commits of ups add that none of
// the server's ledger refs reached already.
func (fc *fleetCheck) newVerdicts(ctx context.Context, ups []Update) ([]newVerdict, error) {
	tips, err := fc.ledgerTips(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []newVerdict
	for _, u := range ups {
		if u.New.IsZero() {
			continue
		}
		args := []string{"rev-list", u.New.String(), "--not"}
		for _, t := range append(tips, u.Old) {
			if !t.IsZero() {
				args = append(args, t.String())
			}
		}
		list, err := git.Run(ctx, git.Cmd{Dir: fc.s.Dir, Args: args})
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot list the pushed ledger commits")
		}
		for _, h := range strings.Fields(string(list)) {
			c, err := fc.s.src.commitInfo(plumbing.NewHash(h))
			if err != nil {
				return nil, err
			}
			if len(c.parents) > 1 {
				continue // a merge adds nothing of its own (CheckBranch)
			}
			ch, err := changeOf(fc.s.src, c)
			if err != nil {
				return nil, err
			}
			for _, f := range ch.novel {
				kind := pathKind(f.path)
				if !isEntryPath(f.path) || (kind != KindVerdict && kind != KindStarted) || seen[f.path] {
					continue
				}
				if kind == KindStarted && fc.s.Repository == "" {
					continue // started entries answer to the repository rule alone
				}
				seen[f.path] = true
				present, err := fc.onServer(tips, f.path)
				if err != nil {
					return nil, err
				}
				if present {
					continue
				}
				raw, err := fc.s.src.readBlob(f.hash)
				if err != nil {
					return nil, err
				}
				var v struct {
					PatchID    string `toml:"patch_id"`
					Verdict    string `toml:"verdict"`
					Rejudges   string `toml:"rejudges"`
					Repository string `toml:"repository"`
				}
				if _, err := toml.Decode(string(raw), &v); err != nil {
					continue // CheckBranch refuses it
				}
				out = append(out, newVerdict{ref: u.Ref, path: f.path, patch: v.PatchID, word: v.Verdict, repository: v.Repository, rejudge: v.Rejudges != "", started: kind == KindStarted, commit: c.hash})
			}
		}
	}
	return out, nil
}

// onServer reports whether any of the ledger tips holds path.
func (fc *fleetCheck) onServer(tips []plumbing.Hash, path string) (bool, error) {
	for _, t := range tips {
		c, err := fc.s.src.commitInfo(t)
		if err != nil {
			return false, err
		}
		if _, ok, err := lookupIn(fc.s.src, c.tree, path); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// verdictsOn returns the verdict words the server's ledger refs hold on
// patch, reading every verdict entry once per push.
func (fc *fleetCheck) verdictsOn(ctx context.Context, patch string) ([]string, error) {
	if fc.judged == nil {
		fc.judged = map[string][]string{}
		tips, err := fc.ledgerTips(ctx)
		if err != nil {
			return nil, err
		}
		read := map[string]bool{}
		for _, t := range tips {
			c, err := fc.s.src.commitInfo(t)
			if err != nil {
				return nil, err
			}
			files, err := listFiles(fc.s.src, c.tree, "")
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if !isEntryPath(f.path) || pathKind(f.path) != KindVerdict || read[f.path] {
					continue
				}
				read[f.path] = true
				raw, err := fc.s.src.readBlob(f.hash)
				if err != nil {
					return nil, err
				}
				if e, err := parseStored(f.path, raw); err == nil {
					fc.judged[e.PatchID] = append(fc.judged[e.PatchID], e.Verdict)
				}
			}
		}
	}
	return fc.judged[patch], nil
}

// conflicts refuses every file the commits of ups add (the ones no ledger
// ref of the server holds yet) at a path that a ledger ref of the server,
// or another update of this push, holds with other bytes.
func (fc *fleetCheck) conflicts(ctx context.Context, ups []Update) error {
	tips, err := fc.ledgerTips(ctx)
	if err != nil {
		return err
	}
	type claim struct {
		ref  string
		hash plumbing.Hash
	}
	pushed := map[string]claim{}
	for _, u := range ups {
		if u.New.IsZero() {
			continue
		}
		args := []string{"rev-list", "--no-merges", u.New.String(), "--not"}
		for _, t := range append(tips, u.Old) {
			if !t.IsZero() {
				args = append(args, t.String())
			}
		}
		list, err := git.Run(ctx, git.Cmd{Dir: fc.s.Dir, Args: args})
		if err != nil {
			return errs.Wrap(errs.Failure, err, "cannot list the pushed ledger commits")
		}
		for _, h := range strings.Fields(string(list)) {
			c, err := fc.s.src.commitInfo(plumbing.NewHash(h))
			if err != nil {
				return err
			}
			ch, err := changeOf(fc.s.src, c)
			if err != nil {
				return err
			}
			for _, f := range ch.novel {
				if prev, ok := pushed[f.path]; ok && prev.hash != f.hash {
					fc.out = append(fc.out, Refusal{Ref: u.Ref, Path: f.path, Rule: fmt.Sprintf("commit %s adds this file, which %s in the same push adds with other bytes; a ledger path holds one content everywhere", git.Short(h), prev.ref)})
					continue
				}
				pushed[f.path] = claim{u.Ref, f.hash}
				for _, t := range tips {
					tc, err := fc.s.src.commitInfo(t)
					if err != nil {
						return err
					}
					held, ok, err := lookupIn(fc.s.src, tc.tree, f.path)
					if err != nil {
						return err
					}
					if ok && held != f.hash {
						fc.out = append(fc.out, Refusal{Ref: u.Ref, Path: f.path, Rule: fmt.Sprintf("commit %s adds this file, which a ledger ref of this remote already holds with other bytes; a ledger path holds one content everywhere, or no fold could merge the two", git.Short(h))})
						break
					}
				}
			}
		}
	}
	return nil
}
