package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("ledger", newLedgerCmd) }

func newLedgerCmd(f *factory) *cobra.Command {
	list := newLedgerListCmd(f, nil)
	cmd := &cobra.Command{
		Use:   "ledger [list] [TARGET] [--kind K] [--json]",
		Short: "Read, verify and share the ledger of attempts",
		Long: `The ledger is hone's append-only record of proposals, verdicts, profiles and
calibrations, kept on the hone/ledger branch (one TOML file per entry) with a
one-line git note per verdict under refs/notes/hone. Without a subcommand,
hone ledger lists attempts like hone ledger list.

No command writes an arbitrary entry: only hone's own proposal, verdict,
profile and calibration code paths append. See ledger/FORMAT.md for reading
the ledger with plain git.`,
		Example: `  hone ledger
  hone ledger wordfreq --kind verdict --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        list.Args,
		RunE: func(cmd *cobra.Command, args []string) error {
			// TARGET shares its position with the subcommands: a word close
			// to one of them that names no target is a typo.
			if len(args) == 1 {
				if err := nearMiss(cmd, args[0], func() bool { return f.isTarget(args[0]) }); err != nil {
					return err
				}
			}
			return list.RunE(cmd, args)
		},
	}
	cmd.Flags().AddFlagSet(list.Flags())
	cmd.AddCommand(list, newLedgerShowCmd(f, nil), newLedgerVerifyCmd(f, nil), newLedgerSyncCmd(f, "push", nil), newLedgerSyncCmd(f, "pull", nil))
	return cmd
}

type ledgerListOptions struct {
	*factory
	out output

	Filter ledger.Filter
	All    bool // started entries too
}

func newLedgerListCmd(f *factory, runF func(*ledgerListOptions) error) *cobra.Command {
	opts := &ledgerListOptions{factory: f, out: f.output()}
	var kind string
	cmd := &cobra.Command{
		Use:   "list [TARGET] [--kind K] [--patch ID] [--attempt-key KEY] [--json]",
		Short: "List attempts in time order",
		Long: `List ledger entries oldest first, under a header row, one line each: id and
patch id (each as its shortest unique prefix, which every command accepts),
kind, target, pin (abbreviated), hotspot, playbook class, verdict, speedup
(baseline/candidate of the deciding metric), signer, runner (the class of the
hone runner that judged the verdict, from its runner_class) and hypothesis
(clipped; "-" where empty). The started entry every verdict writes before its first run
is listed with --all (or --kind started). A proposal shows the latest verdict on its patch, its speedup and its
signer. An empty ledger prints nothing. --patch takes a patch id or a unique
prefix of one.

The signer of a verdict is whoever signed the ledger commit that added it
(git config hone.signingkey): the principal [ledger] allowed_signers lists for
the key, "untrusted" for any other verdict when allowed signers are
configured (it does not count for the one-verdict-per-attempt rule), and
without them "unsigned" or the key's fingerprint.

--json prints an array of objects with the fields id, kind, target, created,
patch_id, commit, pin, attempt_key, hotspot, class, hypothesis, verdict,
verdict_id, summary, speedup, signer, trusted, runner_class, added_by (the ledger commit that
added the entry) and path (empty fields omitted; [] when nothing matches).`,
		Example: `  hone ledger list wordfreq
  hone ledger list --patch 3f2a --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        rangeArgs(0, 1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Filter.Kind = ledger.Kind(kind)
			if kind != "" && !opts.Filter.Kind.Valid() {
				return errs.Usagef("--kind %q is not one of %s", kind, ledger.KindNames())
			}
			opts.Filter.Target = optionalArg(args)
			return nil
		}, ledgerListRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	cmd.Flags().StringVar(&kind, "kind", "", "only entries of this kind: "+ledger.KindNames())
	cmd.Flags().StringVar(&opts.Filter.PatchID, "patch", "", "only entries of this patch `ID` (or a unique prefix of it)")
	cmd.Flags().StringVar(&opts.Filter.AttemptKey, "attempt-key", "", "only entries with this attempt key")
	cmd.Flags().BoolVar(&opts.All, "all", false, "also list started entries (every verdict writes one before its first run)")
	return cmd
}

func ledgerListRun(ctx context.Context, opts *ledgerListOptions) error {
	ws, l, err := opts.ledger()
	if err != nil {
		return err
	}
	filter := opts.Filter
	if filter.PatchID != "" {
		if filter.PatchID, err = l.ResolvePatch(ctx, filter.PatchID); err != nil {
			return err
		}
	}
	rows, err := l.Rows(ctx, filter)
	if err != nil {
		return err
	}
	// Entries are anyone's to push: show their text escaped.
	safetext.Strings(&rows)
	if len(rows) == 0 && filter.Target != "" {
		if _, err := ws.Target(filter.Target); err != nil {
			return err
		}
	}
	if !opts.All && filter.Kind == "" {
		// A started entry says a verdict began; its verdict (or its
		// absence, shown as cancelled) is the row that matters.
		rows = slices.DeleteFunc(rows, func(r ledger.Row) bool { return r.Kind == ledger.KindStarted })
	}
	return opts.out.print(rows, func(w io.Writer) error {
		if len(rows) == 0 {
			return nil
		}
		everyRow := rows
		if filter != (ledger.Filter{}) || !opts.All {
			if everyRow, err = l.Rows(ctx, ledger.Filter{}); err != nil {
				return err
			}
		}
		if err := writeLedgerRows(w, rows, everyRow); err != nil {
			return err
		}
		return writeHonesty(w, ws, rows)
	})
}

// writeLedgerRows prints rows as a table, each id as its shortest unique
// prefix among every row of the ledger.
func writeLedgerRows(w io.Writer, rows, everyRow []ledger.Row) error {
	ids, patches := rowAbbreviations(everyRow)
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, []string{"ID", "KIND", "TARGET", "PATCH", "PIN", "HOTSPOT", "CLASS", "VERDICT", "SPEEDUP", "SIGNER", "RUNNER", "HYPOTHESIS"})
	for _, a := range rows {
		class := "-"
		if a.Class != 0 {
			class = strconv.Itoa(a.Class)
		}
		cells = append(cells, []string{ids[a.ID], string(a.Kind), a.Target, dash(patches[a.PatchID]), dash(git.Short(a.Pin)),
			dash(clipText(a.Hotspot, 24)), class, verdictWord(a.Verdict, a.Flags), speedup(a.Speedup), dash(a.Signer), dash(a.RunnerClass), dash(clipText(a.Hypothesis, 48))})
	}
	return writeColumns(w, cells)
}

// rowAbbreviations returns the shortest unique prefix of every entry id
// and every patch id of the ledger's rows.
func rowAbbreviations(rows []ledger.Row) (ids, patches map[string]string) {
	var e, p []string
	for _, r := range rows {
		e = append(e, r.ID)
		if r.PatchID != "" {
			p = append(p, r.PatchID)
		}
	}
	return abbreviations(e), abbreviations(p)
}

type ledgerShowOptions struct {
	*factory
	out output

	ID string
}

func newLedgerShowCmd(f *factory, runF func(*ledgerShowOptions) error) *cobra.Command {
	opts := &ledgerShowOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Print one ledger entry",
		Long: `Print the ledger entry with the given id (or a unique prefix of at least 4
characters of it, as git abbreviates ids) exactly as stored (TOML), preceded
by comments naming its path on the ledger branch, its attachments and its
signer (see hone ledger list --help). An ambiguous prefix exits 5 and lists
the entries it could mean.

--json prints {"path": ..., "attachments": [...], "entry": {...}, "signer":
{commit, signature, principal, fingerprint, trusted}} where entry is the entry
as its own command prints it with --json (hone patch propose, hone verdict,
hone profile show, hone calibrate).`,
		Example: `  hone ledger show 0194c2d1
  hone ledger show 0194c2d1e7a0 --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return nil
		}, ledgerShowRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func ledgerShowRun(ctx context.Context, opts *ledgerShowOptions) error {
	_, l, err := opts.ledger()
	if err != nil {
		return err
	}
	s, err := l.Get(ctx, opts.ID)
	if err != nil {
		return err
	}
	att, err := l.Attachments(ctx, s)
	if err != nil {
		return err
	}
	if att == nil {
		att = []string{}
	}
	signer, err := l.Signer(ctx, s)
	if err != nil {
		return err
	}
	// The text is the file as stored; only JSON decodes it into its kind.
	return opts.out.printFrom(func() (any, error) {
		entry, err := typedEntry(s)
		if err != nil {
			return nil, err
		}
		safetext.Strings(entry)
		return map[string]any{"path": s.Path, "attachments": att, "entry": entry, "signer": signer}, nil
	}, func(w io.Writer) error {
		tr, err := l.Trust(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "# %s\n", s.Path)
		if len(att) > 0 {
			fmt.Fprintf(w, "# attachments: %s\n", strings.Join(att, ", "))
		}
		fmt.Fprintf(w, "# signer: %s, added by %s\n", signer.Trust(tr.Configured()), dash(git.Short(signer.Commit)))
		_, err = io.WriteString(w, safetext.Log(string(s.Raw)))
		return err
	})
}

type ledgerVerifyOptions struct {
	*factory
	out output

	Repair        bool
	RequireSigned bool
}

func newLedgerVerifyCmd(f *factory, runF func(*ledgerVerifyOptions) error) *cobra.Command {
	opts := &ledgerVerifyOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "verify [--repair] [--require-signed] [--json]",
		Short: "Prove the ledger append-only, well-formed, signed and in agreement with its notes",
		Long: `Check the whole ledger: the branch contains every tip hone recorded for it
(the tip hone last wrote, pulled, pushed or verified, kept in .git/hone/ledger.anchor;
every value its reflog records; what hone ledger pull last fetched from each
remote), so a rewritten history (a replaced root commit, a dropped verdict) is
reported with each entry it lost or changed; no commit of the branch's history
(merges included) changed or deleted a file, and no merge added one; every
entry is well-formed and stored under its own target, kind and id; every
proposal's patch commit exists at refs/hone/patches/<id> with the diff hash it
recorded; the hone lines of the notes equal the verdict entries; and every
signature on a ledger commit that added a verdict verifies. Every writer's
inbox the last pull fetched (refs/hone/remotes/<remote>/inbox/*) is held to
the rules the remote's pre-receive holds inboxes to, for what the branch does
not hold yet: each refusal is a problem of kind inbox at <ref>:<path>. Each
problem is printed as "KIND<TAB>PATH<TAB>MESSAGE". A clean result records
the tip as the new anchor.

This is tamper evidence against anyone who does not rewrite every one of
those records; a server's pre-receive hook (hone guard pre-receive) is the
guarantee. A fresh clone trusts the ledger it first fetched.

--require-signed also reports every verdict not signed by a key that
[ledger] allowed_signers (read at the protected base) lists: unsigned ones and
those of unknown signers.

--repair first adds the note line of any verdict entry that lacks one (what a
hone killed between storing a verdict and noting it leaves); it changes
nothing else, and never moves the anchor.

--json prints {"branch", "tip", "anchor", "commits", "entries", "notes",
"verdicts", "trusted", "problems": [{"kind", "path", "message"}],
"repaired_notes"}. Exit status 5 when any problem remains.`,
		Example: `  hone ledger verify
  hone ledger verify --require-signed
  hone ledger verify --repair --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, ledgerVerifyRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	cmd.Flags().BoolVar(&opts.Repair, "repair", false, "add missing verdict note lines before verifying")
	cmd.Flags().BoolVar(&opts.RequireSigned, "require-signed", false, "report every verdict no allowed signer signed")
	return cmd
}

func ledgerVerifyRun(ctx context.Context, opts *ledgerVerifyOptions) error {
	_, l, err := opts.ledger()
	if err != nil {
		return err
	}
	repaired := 0
	if opts.Repair {
		if repaired, err = l.RepairNotes(ctx); err != nil {
			return err
		}
		if repaired > 0 {
			opts.out.note("added %d missing note line(s)", repaired)
		}
	}
	rep, err := l.Verify(ctx, ledger.VerifyOptions{RequireSigned: opts.RequireSigned, Repair: opts.Repair})
	if err != nil {
		return err
	}
	err = opts.out.print(struct {
		*ledger.VerifyReport
		RepairedNotes int `json:"repaired_notes"`
	}{rep, repaired}, func(w io.Writer) error { return writeVerify(w, rep) })
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return errs.Invalidf("ledger verify found %d problem(s) in %d entries", len(rep.Problems), rep.Entries)
	}
	return nil
}

// writeVerify prints each problem, or the clean result.
func writeVerify(w io.Writer, rep *ledger.VerifyReport) error {
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "%s\t%s\t%s\n", p.Kind, p.Path, p.Message)
	}
	if len(rep.Problems) > 0 {
		return nil
	}
	trust := fmt.Sprintf("%d of %d verdicts signed by an allowed signer (trusted)", rep.Trusted, rep.Verdicts)
	if !rep.SignersConfigured {
		trust = fmt.Sprintf("%d verdicts, unsigned or not checked (no allowed_signers: every verdict counts)", rep.Verdicts)
	}
	_, err := fmt.Fprintf(w, "ok: %d entries, %d commits, %d note lines, %s\n", rep.Entries, rep.Commits, rep.Notes, trust)
	return err
}

type ledgerSyncOptions struct {
	*factory
	out output

	Verb    string // push or pull
	Remote  string
	Timeout time.Duration // push only
}

func newLedgerSyncCmd(f *factory, verb string, runF func(*ledgerSyncOptions) error) *cobra.Command {
	opts := &ledgerSyncOptions{factory: f, out: f.output(), Verb: verb}
	short, long := "Fetch another clone's ledger and merge it into this one",
		`Fetch the remote's ledger branch, notes, patch refs and writers' inboxes into
scratch refs under refs/hone/remotes/, then merge: the branch, and every
inbox that brings something, by tree union in one merge commit (the same path with different content is an integrity error, exit 5,
and nothing is merged), the notes line by line (cat_sort_uniq), and the patch
refs this clone lacks. Nothing is ever forced.`
	if verb == "push" {
		short, long = "Share this clone's ledger with a remote",
			`Pull from the remote first (folding in every writer's inbox), then push the
ledger branch and the notes to this clone's own inbox on the remote,
refs/hone/inbox/<writer-id>/ (the id is git config hone.writerid, drawn on
first push), with the patch refs the remote lacks, and offer the folded
branch and notes to the remote's own refs in the same push, never forcing.
Only this clone moves its inbox, so many clones pushing at once do not
contend: when another writer moved the branch first, the entries wait in the
inbox and the next pull anywhere folds them in (ledger/FORMAT.md). If the
inbox or a patch ref lost a race, pull and push again, after a growing
random pause, until --timeout (default 60s) has passed; then exit 8. A push
the remote's hooks refuse (hone guard pre-receive) exits 3 with the remote's
reasons.`
	}
	cmd := &cobra.Command{
		Use:   verb + " [REMOTE] [--json]",
		Short: short,
		Long: long + `

REMOTE is a remote name or URL; the default is origin. --json prints
{"remote", "ledger", "notes", "entries_added", "patches_added",
"patch_conflicts", "pushed"}; ledger and notes say what happened here:
up-to-date, created, fast-forward, merged, or absent. push adds what it did
to the remote: "remote_ledger" and "remote_notes" (created, updated,
up-to-date, or inbox: in this clone's inbox only, for the next fold),
"entries_pushed" and "patches_pushed".`,
		Example:     fmt.Sprintf("  hone ledger %s\n  hone ledger %s git@example.com:team/f.git --json", verb, verb),
		Annotations: exits(errs.NotFound, errs.Invalid, errs.Busy),
		Args:        rangeArgs(0, 1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Remote = "origin"
			if len(args) == 1 {
				opts.Remote = args[0]
			}
			if verb == "push" && opts.Timeout <= 0 {
				return errs.Usagef("--timeout must be positive, not %s", opts.Timeout)
			}
			return nil
		}, ledgerSyncRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	if verb == "push" {
		cmd.Flags().DurationVar(&opts.Timeout, "timeout", ledger.DefaultPushTimeout, "keep retrying a push that lost a race for this long, then exit 8")
		cmd.Annotations = exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy)
	}
	return cmd
}

func ledgerSyncRun(ctx context.Context, opts *ledgerSyncOptions) error {
	ws, l, err := opts.ledger()
	if err != nil {
		return err
	}
	sync := l.Pull
	if opts.Verb == "push" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		sync = l.Push
	}
	rep, err := sync(ctx, opts.Remote)
	if err != nil {
		return err
	}
	return opts.out.print(rep, func(w io.Writer) error {
		if opts.Verb == "push" {
			writePush(w, ws.Config.Ledger.Branch, ws.Config.Ledger.NotesRef, opts.Remote, rep)
		} else {
			fmt.Fprintf(w, "ledger: %s (+%d entries)\nnotes: %s\npatches: +%d\n", dash(rep.Ledger), rep.EntriesAdded, dash(rep.Notes), rep.PatchesAdded)
		}
		for _, id := range rep.PatchConflict {
			opts.out.note("patch %s has another commit on %s; kept this clone's", id, opts.Remote)
		}
		for _, in := range rep.InboxesSkipped {
			opts.out.note("inbox %s was not folded: it holds %s with other bytes than this ledger; everything else was (hone ledger verify names it)", in.Ref, in.Path)
		}
		return nil
	})
}

// typedEntry decodes a stored entry into its kind's own type, so its JSON
// is what the command that wrote it prints: the same snake_case fields as
// the TOML file, with maps keyed by data (perf event names, file names)
// given as lists.
func typedEntry(s *ledger.Stored) (ledger.Record, error) {
	var e ledger.Record
	switch s.Kind {
	case ledger.KindProposal:
		e = &patch.Proposal{}
	case ledger.KindVerdict:
		e = &verdict.Entry{}
	case ledger.KindProfile:
		e = &profile.Entry{}
	case ledger.KindCalibration:
		e = &verdict.CalibrationEntry{}
	case ledger.KindStarted:
		e = &verdict.StartedEntry{}
	default:
		return nil, errs.Invalidf("ledger entry %s (%s) has unknown kind %q; run `hone ledger verify`", s.ID, s.Path, s.Kind)
	}
	return e, s.Decode(e)
}

// writePush says what a push did: first what the pull before it brought in,
// when anything, then what the remote gained.
func writePush(w io.Writer, branch, notes, remote string, rep *ledger.SyncReport) {
	if rep.EntriesAdded > 0 || rep.PatchesAdded > 0 {
		fmt.Fprintf(w, "pulled from %s first: %s, %s\n", remote, count(rep.EntriesAdded, "entry", "entries"), count(rep.PatchesAdded, "patch", "patches"))
	}
	switch rep.RemoteLedger {
	case "":
		fmt.Fprintf(w, "ledger: this clone has no %s branch yet; nothing to push\n", branch)
	case "created":
		fmt.Fprintf(w, "ledger: created %s on %s with %s\n", branch, remote, count(rep.EntriesPushed, "entry", "entries"))
	case "updated":
		fmt.Fprintf(w, "ledger: pushed %s to %s on %s\n", count(rep.EntriesPushed, "new entry", "new entries"), branch, remote)
	case "inbox":
		fmt.Fprintf(w, "ledger: pushed %s to this clone's inbox on %s; another writer moved %s first, and the next pull there folds them in\n", count(rep.EntriesPushed, "new entry", "new entries"), remote, branch)
	default:
		fmt.Fprintf(w, "ledger: %s on %s is up to date\n", branch, remote)
	}
	switch rep.RemoteNotes {
	case "created", "updated":
		fmt.Fprintf(w, "notes: %s %s on %s\n", rep.RemoteNotes, notes, remote)
	case "inbox":
		fmt.Fprintf(w, "notes: pushed to this clone's inbox on %s\n", remote)
	case "up-to-date":
		fmt.Fprintf(w, "notes: %s on %s is up to date\n", notes, remote)
	}
	fmt.Fprintf(w, "patches: pushed %s\n", count(rep.PatchesPushed, "patch ref", "patch refs"))
}

// writeHonesty follows a listing with, per target whose verdicts it
// shows, how many of its accepts the protocol's false-accept rate alone
// would explain.
func writeHonesty(w io.Writer, ws *workspace.Workspace, rows []ledger.Row) error {
	words := map[string][]string{}
	var targets []string
	for _, r := range rows {
		if r.Kind != ledger.KindVerdict {
			continue
		}
		if _, seen := words[r.Target]; !seen {
			targets = append(targets, r.Target)
		}
		words[r.Target] = append(words[r.Target], r.Verdict)
	}
	for _, name := range targets {
		conf := ws.Config.Bench.Confidence
		if t, err := ws.Target(name); err == nil {
			conf = t.Bench.Confidence
		}
		if h := verdict.HonestyOf(name, words[name], conf); h.Judged > 0 {
			if _, err := fmt.Fprintln(w, "# "+h.String()); err != nil {
				return err
			}
		}
	}
	return nil
}
