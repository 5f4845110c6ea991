package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/runner"
)

func init() { register("runner", command(newRunnerCmd)) }

type runnerOptions struct {
	*factory
	out output

	Runner runner.Options
}

func newRunnerCmd(f *factory, runF func(*runnerOptions) error) *cobra.Command {
	opts := &runnerOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "runner [--remote R] [--class NAME] [--once] [--idle D] [--lease D] [--json]",
		Short: "Judge what agents push, as one runner of a fleet sharing a git remote",
		Long: `Loop: fetch the ledger from the remote (folding every writer's inbox); pick
the oldest proposal that has no trusted verdict and no live claim; claim it
by a create-only push of refs/hone/claims/<patch-id> (a commit signed with
git config hone.signingkey naming this runner, its class, hone's version,
the pin and the lease's expiry), or take over a claim whose lease expired
by a compare-and-swap push; judge it as hone verdict does, renewing the
lease every third of it; push the verdict entry, its note and the claim's
release in one atomic push; repeat. Another runner that claimed first is
skipped, never raced. A runner that loses its claim mid-verdict (its lease
ran out and another took it over) stops and drops its verdict: one claim,
at most one verdict.

--class NAME is recorded in every verdict this runner writes (runner_class).
--once judges at most one proposal and exits: what a CI job runs; with
--idle D it waits up to D for one. --idle D exits after D without work
(default: never). --lease D is the claim's lease (default 15m). --name is
the runner's name in claims; give each running runner its own.

A runner stays up through a remote that is away: a failed fetch, pull or
claim is tried again a poll later, and a finished verdict's release push is
retried with backoff (doubling from half a second up to --retry-max D,
by default a tenth of the lease between 1s and 10s), renewing the lease,
until shortly before the lease ends (it is a compare-and-swap on this
runner's own claim, so a retry never makes a second outcome). Only a refusal by policy or a usage error ends the
loop. Started again under the same name and key, a runner resumes its own
live claims at once instead of waiting out their lease. While idle, each
poll lists the remote's ledger, inbox and claim refs and pulls only when
one moved or a lease it saw ended.

Interrupting the runner (SIGINT, SIGTERM: a service manager's stop, a
deploy, a cancelled CI job) is not a verdict: the claim is released without
an outcome and the proposal goes back to the queue for the next runner,
and the runner exits 0. A cancelled verdict is a person's or an agent's own cancellation (hone
verdict interrupted by them), never a runner's shutdown.

With [ledger] allowed_signers configured, a runner without a signing key, or
with one that file does not list, is refused at start (exit 3): its verdicts
would not count. The remote's pre-receive hook (hone hooks install --server)
refuses claims, moves and verdicts that break these rules; see
ledger/FORMAT.md for what holds without it.

Progress goes to stderr, one line per phase; --json prints what was judged,
an array of {patch_id, verdict, entry_id, summary, error}.

hone runner status [--json] shows the queue, the claims and the runners by
host, and warns when two runners share one.`,
		Example: `  hone runner --class xeon-quiet
  hone runner --once --class ci-large --idle 2m
  hone runner status --json`,
		Annotations: exits(errs.Policy, errs.Busy),
		Args:        exactArgs(0),
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			if opts.Runner.Lease < time.Second {
				return errs.Usagef("--lease must be at least 1s")
			}
			if r := opts.Runner.RetryMax; r != 0 && (r < 100*time.Millisecond || r > opts.Runner.Lease/3) {
				return errs.Usagef("--retry-max must be between 100ms and a third of the lease (%s)", opts.Runner.Lease/3)
			}
			return nil
		}, runnerRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Runner.Remote, "remote", "origin", "the git `REMOTE` the fleet shares")
	fl.StringVar(&opts.Runner.Class, "class", "", "this runner's class `NAME`, recorded in every verdict")
	fl.StringVar(&opts.Runner.Name, "name", "", "this runner's `NAME` in claims (default: host name and writer id)")
	fl.BoolVar(&opts.Runner.Once, "once", false, "judge at most one proposal, then exit")
	fl.DurationVar(&opts.Runner.Idle, "idle", 0, "exit after `D` without work (default: never)")
	fl.DurationVar(&opts.Runner.Lease, "lease", runner.DefaultLease, "a claim's lease `D`, renewed every third of it")
	fl.DurationVar(&opts.Runner.Poll, "poll", 5*time.Second, "look for work every `D` while idle")
	fl.DurationVar(&opts.Runner.RetryMax, "retry-max", 0, "wait at most `D` between tries of a push that failed while the remote was away (default: a tenth of the lease, between 1s and 10s)")
	addJSONFlag(cmd, &opts.out, "print what was judged as JSON")
	cmd.AddCommand(newRunnerStatusCmd(f, nil))
	return cmd
}

// runnerRun prints what was judged even when the loop ended in an error:
// those verdicts are recorded and pushed.
func runnerRun(ctx context.Context, opts *runnerOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	ropts := opts.Runner
	ropts.Version = honeVersion()
	ropts.Progress = func(format string, args ...any) { opts.io.phase("runner: "+format, args...) }
	js, err := runner.Run(ctx, ws, ropts)
	perr := opts.out.print(js, func(w io.Writer) error {
		for _, j := range js {
			if j.Error != "" {
				fmt.Fprintf(w, "%s  not judged: %s\n", j.PatchID, j.Error)
				continue
			}
			fmt.Fprintf(w, "%s  %s  %s\n", j.PatchID, j.Verdict, j.Summary)
		}
		return nil
	})
	if err == nil {
		err = perr
	}
	return err
}

type runnerStatusOptions struct {
	*factory
	out output

	Remote string
}

func newRunnerStatusCmd(f *factory, runF func(*runnerStatusOptions) error) *cobra.Command {
	opts := &runnerStatusOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "status [--remote R] [--json]",
		Short: "Show the fleet's queue, claims and runners",
		Long: `Pull the ledger from the remote and show: the queue (proposals without a
trusted verdict, and how many of them no live claim holds), every claim
(patch, runner, class, last heartbeat, lease expiry, live or expired), and
every runner's record (class, hone version, last heartbeat, the patch it is
judging, its last verdict, its host), and the runners by host: the host each
record names (for a record of an older hone, where its last verdict was
measured; such a runner with no verdict yet has no host). Two
runners on one host are warned of (runners_share_host): they take turns to
measure, so the second adds latency, not throughput.

JSON fields (--json): remote, queue, waiting[] (patch ids), claims[]
(patch_id, runner, class, renewed, expires, live, error), runners[] (runner,
class, version, last_heartbeat, judging, last_patch, last_verdict,
last_verdict_at, host), hosts[] (host, runners[]), warnings[] (code,
message).`,
		Example:     `  hone runner status --json`,
		Annotations: exits(errs.NotFound),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, runnerStatusRun),
	}
	cmd.Flags().StringVar(&opts.Remote, "remote", "origin", "the git `REMOTE` the fleet shares")
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func runnerStatusRun(ctx context.Context, opts *runnerStatusOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	st, err := runner.GetStatus(ctx, ws, opts.Remote)
	if err != nil {
		return err
	}
	opts.out.warn(st.Warnings...)
	return opts.out.print(st, func(w io.Writer) error { return writeRunnerStatus(w, st) })
}

func writeRunnerStatus(w io.Writer, st *runner.Status) error {
	fmt.Fprintf(w, "queue: %d without a trusted verdict, %d waiting for a runner\n", st.Queue, len(st.Waiting))
	fmt.Fprintf(w, "claims: %d\n", len(st.Claims))
	for _, c := range st.Claims {
		state := "expired"
		if c.Live {
			state = "live"
		}
		if c.Error != "" {
			fmt.Fprintf(w, "  %s  unreadable: %s\n", c.PatchID, c.Error)
			continue
		}
		fmt.Fprintf(w, "  %s  %s  class %s  heartbeat %s  lease until %s (%s)\n", c.PatchID, c.Runner, dash(c.Class), c.Renewed.Format(time.RFC3339), c.Expires.Format(time.RFC3339), state)
	}
	fmt.Fprintf(w, "runners: %d\n", len(st.Runners))
	for _, r := range st.Runners {
		last := "no verdict yet"
		if r.LastVerdict != "" {
			last = fmt.Sprintf("last verdict %s on %s at %s", r.LastVerdict, r.LastPatch, r.LastAt.Format(time.RFC3339))
		}
		judging := ""
		if r.Judging != "" {
			judging = "  judging " + r.Judging
		}
		fmt.Fprintf(w, "  %s  class %s  hone %s  heartbeat %s%s  %s\n", r.Runner, dash(r.Class), r.Version, r.Heartbeat.Format(time.RFC3339), judging, last)
	}
	fmt.Fprintf(w, "hosts: %d\n", len(st.Hosts))
	placed := 0
	for _, h := range st.Hosts {
		fmt.Fprintf(w, "  %s  %s\n", h.Host, strings.Join(h.Runners, ", "))
		placed += len(h.Runners)
	}
	if n := len(st.Runners) - placed; n > 0 {
		fmt.Fprintf(w, "  (%d runner(s) whose record names no host and with no verdict in the ledger yet)\n", n)
	}
	return nil
}
