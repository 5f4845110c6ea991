package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/runner"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("verdict", command(newVerdictCmd)) }

// verdictOptions are hone verdict's inputs, checked by the constructor
// before verdictRun sees them.
type verdictOptions struct {
	io        *IOStreams
	workspace func() (*workspace.Workspace, error)
	out       output

	PatchID   string // the patch to judge, or with --pending the TARGET ("" for all)
	Recompute string // --recompute ENTRY-ID
	Pending   bool
	DryRun    bool
	ExitCode  bool
	Judge     verdict.Options
}

func newVerdictCmd(f *factory, runF func(*verdictOptions) error) *cobra.Command {
	opts := &verdictOptions{io: f.io, workspace: f.workspace, out: f.output()}
	cmd := &cobra.Command{
		Use:   "verdict PATCH-ID [--json] [--max-pairs N] [--threshold F] [--rejudge REASON] [--keep] [--exit-code]\n  hone verdict --recompute ENTRY-ID [--json]\n  hone verdict --pending [TARGET] [--json]",
		Short: "Gate and benchmark a patch against its pin, and record the verdict",
		Long: `Judge a patch by hone.toml as its pin's commit holds it (the working tree's
hone.toml changes nothing; hone warns when it differs). Write the pin
(baseline) and the patch commit (candidate) from git's objects
into a run folder under .git/hone/runs/, build both in the jail (the
baseline's build is cached per tree and build command, and checked file by
file before each use), run the target's gates on the candidate (equivalence
gates on both, comparing stdout and exit status byte for byte; sanitizer
gates on both sides' sanitizer builds, where a report fails the gate;
differential gates over generated inputs, every output compared), then
benchmark: one warm-up pair, then baseline/candidate pairs in seeded random
order, in batches of [bench] pairs, until the speedup's CI is
clearly above 1+threshold, clearly below 1, or clearly within the threshold,
or max_pairs is reached. Every bench run's stdout and exit status must be
the baseline's: a candidate that prints anything else is rejected-gate, a
baseline that disagrees with itself is error.

Each verdict draws a fresh input seed, the same for baseline and candidate,
and gives it to the gates and the bench (not the build) as {seed} in their
commands and HONE_SEED in their environment, so no patch can carry answers
computed for a fixed input; the entry records it (input_seed). [bench]
order_seed, another seed, fixes the pair order.

One verdict per patch. A verdict appends a started entry before its first
run; one that never finishes (interrupted, killed) counts as cancelled. A
patch whose attempt has a trusted verdict (cancelled included) is refused
(exit 3, naming it) unless --rejudge "REASON" says why a person wants it
judged again: the new samples are pooled with the earlier ones, on the same
input seed, and the entry links the earlier verdict. An error verdict (the
baseline or the environment failed) may simply be run again, on the same
seed. Every rule (gates, protocol, jail) comes from hone.toml at the tip of
the protected base; --max-pairs and --threshold may only make it stricter,
and the metric cannot be changed. A proposal at a pin the tip does not
accept (not its current pin, nor an earlier one with the same hone.toml and
protected files), or whose entry disagrees with its patch commit, is
recorded as error (stale-pin, proposal-mismatch) without running any of it.

Every command runs in the jail ([sandbox] in hone.toml): a bubblewrap
sandbox with its own user, mount, PID, network, IPC and UTS namespaces, no
capabilities, the system read-only, a private copy of the checkout thrown
away after each run and the build output ($HONE_OUT) read-only after the
build. When the jail is not available the verdict is error, saying what to
install; [sandbox] isolation = "weak" opts out where the account running
the verdict allows it too (HONE_ALLOW_WEAK_ISOLATION=1, or git config
--global hone.allowWeakIsolation true), else the verdict is error
(weak-refused); weak verdicts say "weak isolation" in their summary.

The verdict is one of accepted, needs-human-review (faster, but the patch adds
atomics, locks, threads, unsafe code, inline asm or fast-math flags, found in
the diff, the preprocessed sources or the built binaries, or code that turns a
sanitizer off; or the metrics disagree), rejected-gate, rejected-bench
(regressed, no-change or inconclusive), error (the baseline or the environment
failed; never the patch's fault) or cancelled (interrupted). A verdict whose
pin is not reachable from the protected base refs says so in its summary. It
is appended to the ledger with the raw samples, the environment and the full
output of every build and gate (up to [ledger] gate_log_size per stream), and
noted on the patch commit (git log --notes=hone refs/hone/patches/PATCH-ID).
A failed gate is summarised by its first failing line.

hone verdict show ID [--gate NAME] prints a recorded verdict and a gate's
full output (see hone verdict show --help).

With a runner remote configured ([runner] remote in hone.toml, or git config
hone.runnerRemote), hone verdict does not judge here: it pushes the
proposal there and waits, up to [runner] wait (default 1h), for the trusted
verdict of the runner fleet (hone runner), printing where it stands on
stderr (its place in the fleet's queue, then the runner that claimed it and
the pairs measured so far: redrawn in place on a terminal, a line at each
change otherwise), and returns that
verdict as if it had been reached here. Without one by then it exits 8,
saying where the proposal stands. --metric, --max-pairs, --threshold and
--keep do not apply there; --rejudge still judges here.

--recompute ID re-derives a stored verdict from its samples and says whether
it matches (exit 1 when it does not); ID is the verdict's entry id, or a
patch id for the patch's latest verdict, as hone verdict show takes.

--pending judges, one at a time and oldest first, every proposal of TARGET
(every target without one) that has no trusted verdict, and prints one line
per patch: its id, verdict and summary. It is what a verdict runner runs: a
CI job or a service account on a quiet machine, whose signing key (git config
hone.signingkey) only that account can read, runs hone ledger pull, hone
verdict --pending and hone ledger push. With [ledger] allowed_signers
configured, a runner without a signing key is refused (exit 3), and so is
--pending where runners judge the queue (a remote of this clone with runner
records or claims, or [runner] repository at the protected base): hone
runner --once claims each proposal before judging it, --pending does not.
The queue
is ordered by when the ledger received each proposal (its first-parent
history, never a field the proposer writes), round robin across proposers
(the signing key of the ledger commit that brought it, else its committer),
at most [guard] max_queued (default 4) of each per run, and each patch
commit once whatever the number of patch ids naming it. No input stops the
run: a proposal that can never be judged as it stands (no patch ref, a patch
ref its proposal disagrees with) gets one error verdict saying why; one that
cannot be judged now (another runner's lock, a failure here) is skipped and
reported; every other proposal is still judged, and the exit status is 0.
JSON: an array of {patch_id, entry, error, skipped}.

PATCH-ID and ENTRY-ID may be abbreviated to a unique prefix of at least 4
characters; an ambiguous prefix exits 5 and lists the candidates.

Progress goes to stderr: drawn in place on a terminal, a plain line at each
phase and batch otherwise, none with --json. Interrupting a verdict kills
its commands, removes its run folder and records it as cancelled, with the
pairs measured so far; --keep leaves the run folder for inspection (hone gc
never removes it).

JSON fields (--json): the ledger entry: id, kind, target, patch_id, commit,
pin, attempt_key, hotspot, class, hypothesis, verdict, summary, reason,
detail, input_seed, config_blob, pin_unprotected, started, rejudges,
rejudge_reason, retries, overrides, risk_signals, gates[] (name, passed, equivalence, message, candidate
and baseline runs), bench (metric, pairs, batch_size, max_pairs, threshold,
confidence, seed (the order seed), method, output_sha256, pooled_pairs,
order, decisions, seconds, command_seconds, format, max_speedup,
harness_outputs, benchmarks[] (a harness's: name, decides, command_iterations,
counts, short_cpu, long_cpu, cpu, wall, cpu_stats, wall_stats,
baseline_scaling, candidate_scaling, candidate_proof, proof_counts, unmeasurable,
decision, regressed),
check (the cpu-time batch
confirming an instructions-tier acceptance), metrics[]
with medians, speedup, ci_low, ci_high, p, outliers, cv, detectable_change,
samples[] with the raw values, perf counters), environment (commits, binary
hashes, host, kernel, cpu, loadavg, isolation, weak, network_denied,
jail_uid, jail_user_created, cgroup, baseline_cache_discarded, perf,
instructions_via, tools), calibration_warning, kept_checkouts, warnings.`,
		Example: `  hone verdict 3f2a9c01
  hone verdict 3f2a --exit-code --json > verdict.json
  hone verdict 3f2a --rejudge "the runner was overloaded" --max-pairs 60
  hone ledger pull && hone verdict --pending && hone ledger push`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy, errs.NotAccepted),
		Args:        rangeArgs(0, 1),
		RunE:        runCommand(opts, runF, opts.validate, verdictRun),
	}
	cmd.AddCommand(newVerdictShowCmd(f, nil))
	fl := cmd.Flags()
	addJSONFlag(cmd, &opts.out, "print the verdict entry as JSON")
	fl.StringVar(&opts.Judge.Metric, "metric", "", "deciding `metric`; only the pin's [bench] metric is accepted")
	fl.IntVar(&opts.Judge.MaxPairs, "max-pairs", 0, "stop after `N` pairs, at least the pin's [bench] max_pairs")
	fl.Float64Var(&opts.Judge.Threshold, "threshold", 0, "accept only a speedup CI lower bound of 1+`F`, F at least the pin's [bench] threshold")
	fl.StringVar(&opts.Judge.Rejudge, "rejudge", "", "judge a patch that already has a verdict again, for this `REASON`; samples are pooled")
	fl.BoolVar(&opts.Judge.Keep, "keep", false, "keep the run folder with the baseline and candidate checkouts")
	fl.BoolVar(&opts.ExitCode, "exit-code", false, "exit 10 unless the verdict is accepted")
	fl.StringVar(&opts.Recompute, "recompute", "", "recompute the stored verdict `ENTRY-ID` from its samples")
	fl.BoolVar(&opts.Pending, "pending", false, "judge every proposal (of TARGET) without a trusted verdict, one at a time")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the rules and protocol the verdict would use, running and recording nothing (the attempt is not spent)")
	return cmd
}

// validate checks the flags and arguments together, as cobra cannot.
func (o *verdictOptions) validate(cmd *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.PatchID = args[0]
	}
	if o.Pending {
		if o.Recompute != "" || o.ExitCode || o.Judge.Rejudge != "" {
			return errs.Usagef("--pending judges every pending proposal; it takes neither --recompute, --exit-code nor --rejudge")
		}
		return nil
	}
	if len(args) == 1 {
		if err := nearMiss(cmd, args[0], func() bool { return isHexID(args[0]) }); err != nil {
			return err
		}
	}
	switch {
	case o.DryRun && (o.Recompute != "" || o.ExitCode || o.Judge.Keep):
		return errs.Usagef("--dry-run only says what a verdict would do; it takes neither --recompute, --exit-code nor --keep")
	case o.Recompute != "" && len(args) != 0:
		return errs.Usagef("--recompute takes an entry id instead of a patch id")
	case o.Recompute == "" && len(args) != 1:
		return errs.Usagef("hone verdict needs a PATCH-ID (or --recompute ENTRY-ID)")
	case o.Judge.MaxPairs < 0:
		return errs.Usagef("--max-pairs must be positive")
	case o.Judge.Threshold < 0:
		return errs.Usagef("--threshold must be positive")
	case cmd.Flags().Changed("rejudge") && strings.TrimSpace(o.Judge.Rejudge) == "":
		return errs.Usagef("--rejudge needs a reason: say why the patch should be judged again")
	}
	return nil
}

func verdictRun(ctx context.Context, opts *verdictOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	switch {
	case opts.Pending:
		return judgePending(ctx, opts, ws)
	case opts.Recompute != "":
		return recomputeVerdict(ctx, opts, ws)
	case opts.DryRun:
		return planVerdict(ctx, opts, ws)
	}
	id := opts.PatchID
	judge := opts.Judge
	judge.Progress = func(p verdict.Progress) { opts.io.progress("verdict %s: %s", id, progressText(p)) }
	var drift []errs.Warning
	judge.Warnings = func(w errs.Warning) { drift = append(drift, w) }
	// Waiting for the fleet: where the proposal stands, redrawn in place on
	// a terminal, else a line each time it changes.
	standing := opts.io.phase
	if opts.io.ErrTTY {
		standing = opts.io.progress
	}
	e, err := runner.Judge(ctx, ws, id, judge, func(line string) { standing("verdict %s: %s", id, line) })
	opts.io.endProgress()
	if err != nil {
		return err
	}
	warnings := append(jailWarnings(ws, e.Environment.JailUserCreated), drift...)
	if e.CalibrationWarning != "" {
		warnings = append(warnings, errs.Warning{Code: "uncalibrated", Message: e.CalibrationWarning})
	}
	if err := renderVerdict(&opts.out, e, warnings); err != nil {
		return err
	}
	if opts.ExitCode && e.Verdict != ledger.VerdictAccepted {
		return errs.New(errs.NotAccepted, "verdict %s: %s", e.Verdict, e.Summary)
	}
	return nil
}

// renderVerdict prints a verdict just reached, with its warnings.
func renderVerdict(out *output, e *verdict.Entry, warnings []errs.Warning) error {
	if warnings == nil {
		warnings = []errs.Warning{}
	}
	out.warn(warnings...)
	return out.print(struct {
		*verdict.Entry
		Warnings []errs.Warning `json:"warnings"`
	}{e, warnings}, func(w io.Writer) error { return verdict.WriteText(w, e) })
}

// planVerdict runs hone verdict --dry-run ID.
func planVerdict(ctx context.Context, opts *verdictOptions, ws *workspace.Workspace) error {
	p, err := verdict.Plan(ctx, ws, opts.PatchID, opts.Judge)
	if err != nil {
		return err
	}
	return opts.out.print(p, func(w io.Writer) error { return writePlan(w, p) })
}

func writePlan(w io.Writer, p *verdict.Planned) error {
	fmt.Fprintf(w, "patch      %s (target %s) at pin %s\n", p.PatchID, p.Target, git.Short(p.Pin))
	switch p.Outcome {
	case "judged":
		fmt.Fprintf(w, "would      refuse to judge it again: %s\n", p.Detail)
	case "refuse":
		fmt.Fprintf(w, "would      record error (%s) without running any of its code: %s\n", p.Reason, p.Detail)
	default:
		fmt.Fprintln(w, "would      judge it (--dry-run spends no attempt)")
	}
	if p.ConfigBlob == "" {
		return nil
	}
	fmt.Fprintf(w, "rules      hone.toml blob %s at the protected tip %s\n", git.Short(p.ConfigBlob), p.BaseRef)
	fmt.Fprintf(w, "build      %s\n", oneLine(p.Build))
	for _, g := range p.Gates {
		kind := ""
		switch {
		case g.Differential():
			kind = fmt.Sprintf(", differential over %d generated inputs", g.Seeds)
		case g.Equivalence:
			kind = ", equivalence: output must equal the baseline's"
		}
		if len(g.Sanitize) > 0 {
			kind += ", sanitizers " + strings.Join(g.Sanitize, "+")
		}
		fmt.Fprintf(w, "gate       %s: %s (timeout %s%s)\n", g.Name, oneLine(g.Run), g.Timeout, kind)
	}
	if pr := p.Protocol; pr != nil {
		fmt.Fprintf(w, "bench      %s: %s\n", pr.Metric, oneLine(pr.Run))
		fmt.Fprintf(w, "protocol   %d pairs a batch up to %d, %d warm-up, accept at a CI lower bound of %g at %g%% confidence\n",
			pr.Pairs, pr.MaxPairs, pr.Warmup, 1+pr.Threshold, 100*pr.Confidence)
	}
	if sb := p.Sandbox; sb != nil {
		fmt.Fprintf(w, "jail       isolation %s, network %s\n", sb.Isolation, sb.Network)
	}
	return nil
}

// judgePending runs hone verdict --pending [TARGET]: each judgement's
// line is printed as it is reached, as a runner's log wants it.
func judgePending(ctx context.Context, opts *verdictOptions, ws *workspace.Workspace) error {
	done := func(j verdict.Judgement) { opts.out.text(func(w io.Writer) { writeJudgement(w, j) }) }
	js, err := verdict.Pending(ctx, ws, opts.PatchID, opts.Judge, done)
	if err != nil {
		return err
	}
	return opts.out.print(js, func(w io.Writer) error {
		if len(js) == 0 {
			fmt.Fprintln(w, "no pending proposals")
		}
		skipped := 0
		for _, j := range js {
			if j.Skipped {
				skipped++
			}
		}
		if skipped > 0 {
			opts.out.note("%d of %d pending proposal(s) skipped (see above); everything else was judged", skipped, len(js))
		}
		return nil
	})
}

func writeJudgement(w io.Writer, j verdict.Judgement) {
	if j.Entry == nil {
		fmt.Fprintf(w, "%s  skipped: %s\n", j.PatchID, j.Error)
		return
	}
	fmt.Fprintf(w, "%s  %s  %s\n", j.PatchID, j.Entry.Verdict, j.Entry.Summary)
}

func recomputeVerdict(ctx context.Context, opts *verdictOptions, ws *workspace.Workspace) error {
	re, match, err := verdict.Recompute(ctx, ws, opts.Recompute)
	if err != nil {
		return err
	}
	err = opts.out.print(map[string]any{"entry_id": re.ID, "match": match, "recomputed": re}, func(w io.Writer) error {
		if err := verdict.WriteText(w, re); err != nil {
			return err
		}
		_, err := fmt.Fprintf(w, "\nrecomputed from the stored samples: %s\n", map[bool]string{true: "matches the stored verdict", false: "DIFFERS from the stored verdict"}[match])
		return err
	})
	if err != nil {
		return err
	}
	if !match {
		return errs.Failuref("entry %s: the recomputed verdict differs from the stored one", re.ID)
	}
	return nil
}

func progressText(p verdict.Progress) string {
	prefix := ""
	if p.Sessions > 0 {
		prefix = fmt.Sprintf("session %d/%d ", p.Session, p.Sessions)
	}
	if p.Holder != "" {
		// Waiting for the machine's turn: behind whom, and how far back.
		place := "next in line"
		if p.Ahead > 0 {
			place = fmt.Sprintf("%d ahead in line", p.Ahead)
		}
		s := fmt.Sprintf("%s%s: held by %s; %s", prefix, p.Phase, p.Holder, place)
		if !p.Expected.IsZero() {
			s += fmt.Sprintf("; expected at about %s (a turn here takes %s, the median of recent ones)", p.Expected.Local().Format(time.TimeOnly), p.Turn.Round(time.Second))
		}
		return s
	}
	switch p.Phase {
	case "gate":
		return prefix + "gate " + p.Gate
	case "bench":
		if p.Pairs == 0 {
			return prefix + "bench " + p.Metric
		}
		return fmt.Sprintf("%sbench %d/%d pairs, %s speedup %.3fx, %s [%.3f, %.3f]", prefix, p.Pairs, p.MaxPairs, p.Metric, p.Speedup, verdict.CILabel(p.Confidence), p.CILow, p.CIHigh)
	}
	return prefix + p.Phase
}

// isHexID reports whether s could be a patch id or a prefix of one.
func isHexID(s string) bool {
	return s != "" && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}
