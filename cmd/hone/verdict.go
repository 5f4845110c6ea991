package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

func init() { register("verdict", newVerdictCmd) }

func newVerdictCmd(app *App) *cobra.Command {
	var opts verdict.Options
	var asJSON, exitCode, pending bool
	var recompute string
	cmd := &cobra.Command{
		Use:   "verdict PATCH-ID [--json] [--metric M] [--max-pairs N] [--keep] [--exit-code]\n  hone verdict --recompute ENTRY-ID [--json]\n  hone verdict --pending [TARGET] [--json]",
		Short: "Gate and benchmark a patch against its pin, and record the verdict",
		Long: `Write the pin (baseline) and the patch commit (candidate) from git's objects
into a run folder under .git/hone/runs/, build both in the jail (the
baseline's build is cached per tree and build command, and checked file by
file before each use), run the target's gates on the candidate (equivalence
gates on both, comparing stdout and exit status byte for byte; sanitizer
gates on both sides' sanitizer builds, where a report fails the gate;
differential gates over generated inputs, every output compared), then
benchmark: one warm-up pair, then baseline/candidate pairs in seeded random
order, in batches of [bench] pairs, until the speedup's bootstrap CI is
clearly above 1+threshold, clearly below 1, or clearly within the threshold,
or max_pairs is reached.

Every command runs in the jail ([sandbox] in hone.toml): a bubblewrap
sandbox with its own user, mount, PID, network, IPC and UTS namespaces, no
capabilities, the system read-only, a private copy of the checkout thrown
away after each run and the build output ($HONE_OUT) read-only after the
build. When the jail is not available the verdict is error, saying what to
install; [sandbox] isolation = "weak" opts out, and such verdicts say
"weak isolation" in their summary.

The verdict is one of accepted, needs-human-review (faster, but the patch adds
atomics, locks, threads, unsafe code, inline asm or fast-math flags),
rejected-gate, rejected-bench (regressed, no-change or inconclusive) or error
(the baseline or the environment failed; never the patch's fault). It is
appended to the ledger with the raw samples, the environment and the full
output of every build and gate (up to [ledger] gate_log_size per stream), and
noted on the patch commit (git log --notes=hone refs/hone/patches/PATCH-ID).
A failed gate is summarised by its first failing line.

hone verdict show ID [--gate NAME] prints a recorded verdict and a gate's
full output (see hone verdict show --help).

--recompute ENTRY-ID re-derives a stored verdict from its samples and says
whether it matches (exit 1 when it does not).

--pending judges, one at a time and oldest first, every proposal of TARGET
(every target without one) that has no trusted verdict, and prints one line
per patch: its id, verdict and summary. It is what a verdict runner runs: a
CI job or a service account on a quiet machine, whose signing key (git config
hone.signingkey) only that account can read, runs hone ledger pull, hone
verdict --pending and hone ledger push. With [ledger] allowed_signers
configured, a runner without a signing key is refused (exit 3). A patch that
cannot be judged is reported and the others are still judged; the exit status
is then that patch's. JSON: an array of {patch_id, entry, error}.

PATCH-ID and ENTRY-ID may be abbreviated to a unique prefix of at least 4
characters; an ambiguous prefix exits 5 and lists the candidates.

Progress goes to stderr when it is a terminal. Interrupting a verdict kills
its commands, removes its run folder and records nothing; --keep leaves the
run folder for inspection (hone gc never removes it).

JSON fields (--json): the ledger entry: id, kind, target, patch_id, commit,
pin, attempt_key, hotspot, class, hypothesis, verdict, summary, reason,
detail, risk_signals, gates[] (name, passed, equivalence, message, candidate
and baseline runs), bench (metric, pairs, batch_size, max_pairs, threshold,
confidence, seed, order, decisions, seconds, command_seconds, metrics[]
with medians, speedup, ci_low, ci_high, p, outliers, cv, detectable_change,
samples[] with the raw values, perf counters), environment (commits, binary
hashes, host, kernel, cpu, loadavg, isolation, weak, network_denied,
jail_uid, jail_user_created, cgroup, baseline_cache_discarded, perf,
instructions_via, tools), calibration_warning, kept_checkouts, warnings.`,
		Example: `  hone verdict 3f2a9c01
  hone verdict 3f2a --exit-code --json > verdict.json
  hone ledger pull && hone verdict --pending && hone ledger push`,
		Annotations: exits(errs.Policy, errs.NotFound, errs.Invalid, errs.Busy, errs.NotAccepted),
		Args:        rangeArgs(0, 1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if pending {
				if recompute != "" || exitCode {
					return errs.Usagef("--pending judges every pending proposal; it takes neither --recompute nor --exit-code")
				}
				return judgePending(ctx, app, args, opts, asJSON)
			}
			if len(args) == 1 {
				if err := nearMiss(cmd, args[0], func() bool { return isHexID(args[0]) }); err != nil {
					return err
				}
			}
			switch {
			case recompute != "" && len(args) != 0:
				return errs.Usagef("--recompute takes an entry id instead of a patch id")
			case recompute == "" && len(args) != 1:
				return errs.Usagef("hone verdict needs a PATCH-ID (or --recompute ENTRY-ID)")
			case opts.MaxPairs < 0:
				return errs.Usagef("--max-pairs must be positive")
			}
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			if recompute != "" {
				return recomputeVerdict(ctx, app, ws, recompute, asJSON)
			}
			opts.Progress = func(p verdict.Progress) { app.progress("verdict %s: %s", args[0], progressText(p)) }
			e, err := verdict.Run(ctx, ws, args[0], opts)
			app.endProgress()
			if err != nil {
				return err
			}
			warnings := jailWarnings(ws, e.Environment.JailUserCreated)
			if e.CalibrationWarning != "" {
				warnings = append(warnings, errs.Warning{Code: "uncalibrated", Message: e.CalibrationWarning})
			}
			if asJSON {
				err = app.printJSON(struct {
					*verdict.Entry
					Warnings []errs.Warning `json:"warnings"`
				}{e, warnings})
			} else {
				app.warn(warnings...)
				err = verdict.WriteText(app.Out, e)
			}
			if err == nil && exitCode && e.Verdict != ledger.VerdictAccepted {
				return errs.New(errs.NotAccepted, "verdict %s: %s", e.Verdict, e.Summary)
			}
			return err
		}),
	}
	cmd.AddCommand(newVerdictShowCmd(app))
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the verdict entry as JSON")
	f.StringVar(&opts.Metric, "metric", "", "deciding `metric`: instructions, cpu-time or wall (default [bench] metric)")
	f.IntVar(&opts.MaxPairs, "max-pairs", 0, "stop after `N` pairs (default [bench] max_pairs)")
	f.BoolVar(&opts.Keep, "keep", false, "keep the run folder with the baseline and candidate checkouts")
	f.BoolVar(&exitCode, "exit-code", false, "exit 10 unless the verdict is accepted")
	f.StringVar(&recompute, "recompute", "", "recompute the stored verdict `ENTRY-ID` from its samples")
	f.BoolVar(&pending, "pending", false, "judge every proposal (of TARGET) without a trusted verdict, one at a time")
	return cmd
}

// judgePending runs hone verdict --pending [TARGET].
func judgePending(ctx context.Context, app *App, args []string, opts verdict.Options, asJSON bool) error {
	ws, err := app.workspace()
	if err != nil {
		return err
	}
	target := ""
	if len(args) == 1 {
		target = args[0]
	}
	done := func(j verdict.Judgement) {
		if asJSON {
			return
		}
		if j.Entry == nil {
			fmt.Fprintf(app.Out, "%s  not judged: %s\n", j.PatchID, j.Error)
			return
		}
		fmt.Fprintf(app.Out, "%s  %s  %s\n", j.PatchID, j.Entry.Verdict, j.Entry.Summary)
	}
	js, err := verdict.Pending(ctx, ws, target, opts, done)
	if err != nil {
		return err
	}
	if asJSON {
		if err := app.printJSON(js); err != nil {
			return err
		}
	} else if len(js) == 0 {
		fmt.Fprintln(app.Out, "no pending proposals")
	}
	return verdict.Failed(js)
}

func recomputeVerdict(ctx context.Context, app *App, ws *workspace.Workspace, id string, asJSON bool) error {
	re, match, err := verdict.Recompute(ctx, ws, id)
	if err != nil {
		return err
	}
	if asJSON {
		if err := app.printJSON(map[string]any{"entry_id": re.ID, "match": match, "recomputed": re}); err != nil {
			return err
		}
	} else {
		if err := verdict.WriteText(app.Out, re); err != nil {
			return err
		}
		fmt.Fprintf(app.Out, "\nrecomputed from the stored samples: %s\n", map[bool]string{true: "matches the stored verdict", false: "DIFFERS from the stored verdict"}[match])
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
	switch p.Phase {
	case "gate":
		return prefix + "gate " + p.Gate
	case "bench":
		if p.Pairs == 0 {
			return prefix + "bench " + p.Metric
		}
		return fmt.Sprintf("%sbench %d/%d pairs, %s speedup %.3fx [%.3f, %.3f]", prefix, p.Pairs, p.MaxPairs, p.Metric, p.Speedup, p.CILow, p.CIHigh)
	}
	return prefix + p.Phase
}

// isHexID reports whether s could be a patch id or a prefix of one.
func isHexID(s string) bool {
	return s != "" && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}
