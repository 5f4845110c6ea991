package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/patch"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("patch", newPatchCmd) }

func newPatchCmd(f *factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "patch",
		Short: "Propose, list and show patches",
		Long: `A patch is a diff against a target's pin that hone has checked against the
target's allowlist, applied with git into a throwaway index, and stored as a
commit at refs/hone/patches/<id> with a proposal entry in the ledger.`,
		Example: `  git diff | hone patch propose wordfreq --hotspot find_word --class 5 --hypothesis "hash the words"
  hone patch list wordfreq`,
	}
	cmd.AddCommand(newPatchProposeCmd(f, nil), newPatchListCmd(f, nil), newPatchShowCmd(f, nil), newPatchLandCmd(f, nil))
	return cmd
}

type patchProposeOptions struct {
	*factory
	out output

	File    string // the diff's file; "" or "-" is stdin
	Request patch.Request
}

func newPatchProposeCmd(f *factory, runF func(*patchProposeOptions) error) *cobra.Command {
	opts := &patchProposeOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "propose TARGET --hotspot SYMBOL --class N --hypothesis TEXT [--file F] [--json]",
		Short: "Check a diff against the target's allowlist and store it as a patch",
		Long: `Read a git-style unified diff (from --file, or stdin), check every path it names
against the target's allowlist (its path minus its protect patterns), apply it
with git into a throwaway index built from the pin, check again every path and
mode git changed, and store the result as refs/hone/patches/<id> with a
proposal entry in the ledger. Prints the patch id.

Paths in the diff are relative to the repository's top level, as plain
` + "`git diff`" + ` writes them from any directory (not ` + "`git diff --relative`" + `). The
diff may not name a path outside the target, a protected path, a .git path in
any spelling, .gitattributes or .gitmodules, a symlink or gitlink, a mode
other than 100644/100755, a copy, or binary content (exit 3); only "diff --git
a/... b/..." diffs are accepted, and a parse error anywhere refuses it whole
(exit 5). The allowlist and the limits come from hone.toml at the tip of the
protected base, never from the working tree (hone warns when the two
differ). The pin is the tip's too: the working tree's hone.toml may name an
earlier pin only when its hone.toml, protected files and the target's own
files equal the current pin's (a patch is judged against the code it would
land on); any other pin is refused (exit 3, stale-pin), naming the current pin
and what differs, so re-propose there.

An idea is judged once per pin: an attempt (target, hotspot, class,
hypothesis) that already has a verdict, or a diff that is a judged one's but
for comments, whitespace and the names of the identifiers it declares, is
refused (exit 3, naming it), whatever its hypothesis says. "The same pin"
means the same tree of the target and the same hone.toml; once either has
moved on, the idea may be tried again and the proposal links the earlier
verdict (retries). The same diff on the same pin is the same patch: proposing
it again before it is judged prints the existing id and adds nothing.

The diff, the hypothesis and the hotspot have size limits ([patch]
max_diff_bytes, max_hypothesis_bytes and max_hotspot_bytes in hone.toml;
4 MiB, 2 KiB and 256 bytes by default).

Warnings (similar earlier hypotheses, a hotspot the latest profile does not
list, a working tree's hone.toml that differs from the pin's, an idea retried
at a new pin) go to stderr, or with --json into "warnings": [{"code", "message"}].

JSON fields: patch_id, commit, existing, warnings, proposal (the ledger entry:
id, target, pin, patch_id, commit, attempt_key, hotspot, class, hypothesis,
diff_sha256, files, added, removed, config_blob, normalized_sha256, retries,
pin_unprotected, ...).`,
		Example: `  git diff > idea.diff && git checkout .
  hone patch propose wordfreq --hotspot find_word --class 5 --hypothesis "hash the words" --file idea.diff
  git diff | hone patch propose wordfreq --hotspot find_word --class 5 --hypothesis "hash the words" --json`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Request.Target = args[0]
			return nil
		}, patchProposeRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Request.Hotspot, "hotspot", "", "the symbol the patch speeds up (from the profile)")
	fl.IntVar(&opts.Request.Class, "class", 0, fmt.Sprintf("the playbook class of the idea, 1-%d", patch.MaxClass))
	fl.StringVar(&opts.Request.Hypothesis, "hypothesis", "", "why the patch should be faster, in words")
	fl.StringVar(&opts.File, "file", "", "read the diff from `FILE` (relative to the current directory) instead of stdin")
	fl.StringVar(&opts.Request.Author, "author", "", "who proposes, `\"NAME <EMAIL>\"`: the author `hone patch land` gives the landed commit (default: the git user)")
	addJSONFlag(cmd, &opts.out, "print the result as JSON")
	for _, name := range []string{"hotspot", "class", "hypothesis"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

func patchProposeRun(ctx context.Context, opts *patchProposeOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	req := opts.Request
	if req.Diff, err = readDiff(opts.io.In, ws, opts.File); err != nil {
		return err
	}
	res, err := patch.Propose(ctx, ws, req)
	if err != nil {
		return err
	}
	return opts.out.print(res, func(w io.Writer) error {
		opts.out.warn(res.Warnings...)
		if res.Existing {
			opts.out.note("the same diff was already proposed on this pin as %s", res.PatchID)
		}
		_, err := fmt.Fprintln(w, res.PatchID)
		return err
	})
}

// readDiff reads the diff from file or stdin, at most one byte past the
// configured limit so an oversized diff is refused without reading it all.
func readDiff(in io.Reader, ws *workspace.Workspace, file string) ([]byte, error) {
	if file != "" && file != "-" {
		fh, err := os.Open(file)
		if err != nil {
			return nil, errs.Wrap(errs.NotFound, err, "cannot read the diff")
		}
		defer fh.Close()
		in = fh
	}
	if in == nil {
		return nil, errs.Usagef("no diff: give one on stdin or with --file")
	}
	b, err := io.ReadAll(io.LimitReader(in, ws.Config.Patch.MaxDiffBytes+1))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read the diff")
	}
	return b, nil
}

type patchListOptions struct {
	*factory
	out output

	Target string // "" lists every target's
}

func newPatchListCmd(f *factory, runF func(*patchListOptions) error) *cobra.Command {
	opts := &patchListOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "list [TARGET] [--json]",
		Short: "List proposed patches, oldest first",
		Long: `List the proposals recorded in the ledger, for one target or all of them,
oldest first: patch id (its shortest unique prefix), target, pin (abbreviated), playbook class, hotspot,
lines added and removed, the latest verdict on the patch and its speedup
(baseline/candidate of the deciding metric), and the hypothesis. "-" marks a
patch without a verdict, or a verdict without a bench.

JSON: an array of proposal entries (id, target, pin, patch_id, commit,
attempt_key, hotspot, class, hypothesis, diff_sha256, files, added, removed,
created, ...) with the latest verdict's verdict, verdict_id, summary and
speedup. A verdict whose pin is not on the protected base, or that ran with
weak isolation, says so beside its word.`,
		Example: `  hone patch list
  hone patch list wordfreq --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        rangeArgs(0, 1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.Target = optionalArg(args)
			return nil
		}, patchListRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func patchListRun(ctx context.Context, opts *patchListOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	ps, err := patch.List(ctx, ws, opts.Target)
	if err != nil {
		return err
	}
	return opts.out.print(ps, func(w io.Writer) error {
		all, err := patch.List(ctx, ws, "")
		if err != nil {
			return err
		}
		return writePatchList(w, ps, all)
	})
}

// writePatchList prints patches as a table, each id as its shortest unique
// prefix among all of them.
func writePatchList(w io.Writer, ps, all []*patch.Listed) error {
	ids := make([]string, len(all))
	for i, p := range all {
		ids[i] = p.PatchID
	}
	short := abbreviations(ids)
	rows := [][]string{{"PATCH", "TARGET", "PIN", "CLASS", "HOTSPOT", "CHANGE", "VERDICT", "SPEEDUP", "SIGNER", "HYPOTHESIS"}}
	for _, p := range ps {
		rows = append(rows, []string{short[p.PatchID], p.Target, git.Short(p.Pin), strconv.Itoa(p.Class), clipText(p.Hotspot, 40),
			fmt.Sprintf("+%d -%d", p.Added, p.Removed), verdictWord(p.Verdict, p.VerdictFlags), speedup(p.Speedup), dash(p.Signer), clipText(p.Hypothesis, 60)})
	}
	return writeColumns(w, rows)
}

type patchShowOptions struct {
	*factory
	out output

	ID string
}

func newPatchShowCmd(f *factory, runF func(*patchShowOptions) error) *cobra.Command {
	opts := &patchShowOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show a patch: its proposal, its diff and every verdict",
		Long: `Show a patch by id (or a unique prefix of at least 4 characters of it): the
proposal's metadata, the diff from the pin to the patch commit, and every
verdict recorded for it. An ambiguous prefix exits 5 and lists the patches it
could mean.

JSON fields: proposal (the ledger entry), diff, verdicts (array of entries
with id, verdict, summary, created, ...).`,
		Example: `  hone patch show 3f2a
  hone patch show 3f2a9c01 --json`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return nil
		}, patchShowRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func patchShowRun(ctx context.Context, opts *patchShowOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	sh, err := patch.Show(ctx, ws, opts.ID)
	if err != nil {
		return err
	}
	return opts.out.print(sh, func(w io.Writer) error { return writePatchShow(w, sh) })
}

func writePatchShow(w io.Writer, sh *patch.Shown) error {
	p := sh.Proposal
	fmt.Fprintf(w, "patch      %s\ntarget     %s\npin        %s\ncommit     %s\nhotspot    %s\nclass      %d\nhypothesis %s\nfiles      %s (+%d -%d)\nentry      %s (%s)\n",
		p.PatchID, p.Target, p.Pin, p.Commit, p.Hotspot, p.Class, p.Hypothesis, strings.Join(p.Files, ", "), p.Added, p.Removed, p.ID, p.Created.Format("2006-01-02 15:04:05Z07:00"))
	if len(sh.Verdicts) == 0 {
		fmt.Fprintln(w, "verdicts   none yet")
	}
	for _, v := range sh.Verdicts {
		fmt.Fprintf(w, "verdict    %s: %s (entry %s)\n", v.Verdict, v.Summary, v.ID)
	}
	fmt.Fprintln(w)
	_, err := io.WriteString(w, sh.Diff)
	return err
}

type patchLandOptions struct {
	*factory
	out output

	ID   string
	Land patch.LandOptions
}

func newPatchLandCmd(f *factory, runF func(*patchLandOptions) error) *cobra.Command {
	opts := &patchLandOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "land ID [--reviewed] [--json]",
		Short: "Apply an accepted patch to the current branch",
		Long: `Apply a patch (by id, or a unique prefix of at least 4 characters) whose
trusted verdict is accepted to the branch checked out, as one new commit:
its author is the proposer (propose --author, by default the git user who
proposed), its subject the target and the hypothesis, and its trailers
Hone-Patch, Hone-Verdict and Hone-Pin lead back to the ledger. The commit
goes through the repository's hooks, hone's guard included.

A needs-human-review verdict lands only with --reviewed, which says a person
did the review it asks for. The working tree must be clean; a patch that no
longer applies to the branch is refused with the tree as it was: the pin
has moved on, so re-propose the idea at the current pin.

JSON fields: patch_id, commit, branch, author, verdict, speedup.`,
		Example: `  hone patch land 3f2a
  hone patch land 3f2a --reviewed`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return nil
		}, patchLandRun),
	}
	cmd.Flags().BoolVar(&opts.Land.Reviewed, "reviewed", false, "land a needs-human-review verdict: you did the review it asks for")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func patchLandRun(ctx context.Context, opts *patchLandOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	res, err := patch.Land(ctx, ws, opts.ID, opts.Land)
	if err != nil {
		return err
	}
	return opts.out.print(res, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "landed patch %s (%s %s) on %s as %s, author %s\n",
			res.PatchID, res.Verdict, speedup(res.Speedup), res.Branch, git.Short(res.Commit), res.Author)
		return err
	})
}
