package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/demo"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/textwrap"
	"github.com/hone-perf/hone/ledger"
)

func init() { register("demo", command(newDemoCmd)) }

type demoOptions struct {
	*factory

	Keep string // the workspace's directory, kept; "" is a temporary one
}

func newDemoCmd(f *factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "demo [--keep DIR]",
		Short: "Run a complete optimization session on a built-in example",
		Long: `Create a workspace from an example built into hone (a small C program with a
real hotspot, its unit test, a golden corpus and a hone.toml) and narrate one
full session with real commands and real measurements: init, profile run,
playbook, a patch that fixes the hotspot and its verdict, a patch refused by the
allowlist, an idea refused as a duplicate, a slower patch and its verdict, the
ledger, ledger verify and the HTML report.

Each step prints the hone command it runs; run it by hand in a kept workspace
to see the same thing. The session takes 10 to 30 seconds on two cores (more
on a heavily loaded machine); it needs git, a C compiler (cc) and perf. It
exits non-zero if any step does not produce the expected outcome.

Without --keep the workspace lives in a temporary directory removed at the end
(it is left in place, and named, when a step fails). With --keep DIR it is
created in DIR (relative to the current directory), which must be new or
empty, and kept.`,
		Example: `  hone demo
  hone demo --keep /tmp/tour && cd /tmp/tour && hone ledger`,
		Annotations: exits(errs.Policy),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, demoRun),
	}
	cmd.Flags().StringVar(&opts.Keep, "keep", "", "create the workspace in `DIR` (relative to the current directory) and keep it")
	return cmd
}

func demoRun(ctx context.Context, opts *demoOptions) (err error) {
	f, keep := opts.factory, opts.Keep
	dir := keep
	if dir == "" {
		tmp, mkErr := os.MkdirTemp("", "hone-demo-")
		if mkErr != nil {
			return errs.Wrap(errs.Failure, mkErr, "cannot create a temporary directory")
		}
		dir = filepath.Join(tmp, demo.Target)
		// err is the named result: the workspace goes only when all went well.
		defer func() {
			if err == nil {
				os.RemoveAll(tmp)
			} else {
				fmt.Fprintf(f.io.ErrOut, "hone demo: the workspace is left at %s to look into\n", dir)
			}
		}()
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot resolve %s", keep)
	}
	runner, err := honeRunner(f)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := demo.Create(ctx, dir); err != nil {
		return err
	}
	p := demoPrinter{w: f.io.Out, color: f.io.Color}
	fmt.Fprintln(f.io.Out, "hone demo: one optimization session on a built-in example, with real commands and measurements.")
	if keep != "" {
		fmt.Fprintf(f.io.Out, "Every command below runs in the example workspace; to repeat one by hand:\n\n  cd %s\n", dir)
	} else {
		fmt.Fprintln(f.io.Out, "Every command below runs in a temporary example workspace, removed at the end;\n"+
			"run `hone demo --keep DIR` to keep it and repeat any command by hand.")
	}
	s := &demo.Session{Dir: dir, Run: runner, Report: p.event}
	if err := s.Play(ctx); err != nil {
		p.failed()
		return err
	}
	fmt.Fprintf(f.io.Out, "\n%s in %.0fs.\n", p.green("The demo went as expected"), time.Since(start).Seconds())
	if keep == "" {
		fmt.Fprintln(f.io.Out, "The temporary workspace is removed; `hone demo --keep DIR` keeps one to explore.")
	} else {
		fmt.Fprintf(f.io.Out, "The workspace is kept: cd %s, then try `hone ledger`, `hone patch show %s`,\n"+
			"`git log --notes=hone %s`, or open %s.\n",
			dir, s.FixID, ledger.PatchRef(s.FixID), filepath.Join(dir, demo.ReportFile))
	}
	return nil
}

// honeRunner runs this very binary as `hone`, so the commands the demo prints
// are literally what ran. argv[0] is "hone" so a test binary standing in for
// hone (testscript) dispatches the same way.
func honeRunner(f *factory) (demo.Runner, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot find the hone executable to run the demo's commands")
	}
	return func(ctx context.Context, dir string, args ...string) (demo.Result, error) {
		c := exec.CommandContext(ctx, exe, args...)
		c.Args[0] = "hone"
		c.Dir = dir
		// On cancellation, SIGTERM lets the child cancel its own work and
		// its sandboxed commands before it is killed outright.
		c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
		c.WaitDelay = 10 * time.Second
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		stop := tick(f, "hone "+args[0])
		err := c.Run()
		stop()
		res := demo.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			res.Code = ee.ExitCode()
			return res, nil
		}
		return res, err
	}, nil
}

// tick shows how long a command has been running, on a terminal only.
func tick(f *factory, what string) (stop func()) {
	if !f.io.ErrTTY {
		// The narration already says what runs; a line a second is noise.
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		start := time.Now()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f.io.progress("    %s: %.0fs", what, time.Since(start).Seconds())
			}
		}
	}()
	return func() { close(done); f.io.endProgress() }
}

// demoPrinter renders the session's events as a narrated transcript.
type demoPrinter struct {
	w     io.Writer
	color bool
	step  string
}

func (p *demoPrinter) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *demoPrinter) green(s string) string { return p.paint("32", s) }

func (p *demoPrinter) event(e demo.Event) {
	switch e.Kind {
	case demo.StepStarted:
		p.step = fmt.Sprintf("[%d/%d] %s", e.Step, e.Steps, e.Title)
		fmt.Fprintf(p.w, "\n%s\n", p.paint("1", p.step))
		for _, l := range textwrap.Lines(e.Say, 76) {
			fmt.Fprintln(p.w, "  "+l)
		}
	case demo.CommandStarted:
		fmt.Fprintf(p.w, "  %s %s\n", p.paint("36", "$"), e.Command)
	case demo.CommandOutput:
		for _, l := range e.Lines {
			fmt.Fprintln(p.w, "    │ "+l)
		}
	case demo.StepDone:
		fmt.Fprintf(p.w, "  %s %s %s\n", p.green("✓"), e.Outcome, p.paint("2", fmt.Sprintf("(%.1fs)", e.Elapsed.Seconds())))
	}
}

func (p *demoPrinter) failed() {
	fmt.Fprintf(p.w, "  %s %s\n", p.paint("31", "✗"), "this step did not go as expected (see the error below)")
}
