package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
)

// version is set at build time with -ldflags "-X main.version=..."
// (scripts/build.sh does); see honeVersion for builds that did not set it.
var version = "dev"

// honeVersion is version, or for a build that did not set it, what the go
// command stamped into the binary: the module version of `go install
// module@version`, or the pseudo-version of a build from a git checkout.
var honeVersion = sync.OnceValue(func() string {
	info, _ := debug.ReadBuildInfo()
	return stampedVersion(version, info)
})

func stampedVersion(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "dev" || info == nil {
		return ldflags
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ldflags
}

// commands is filled by each command file's init, so adding a command never
// means editing this file. Each constructor is registered under the name of
// the command it builds, so an invocation can build only the command it names.
var commands []registered

type registered struct {
	name string
	new  func(*factory) *cobra.Command
}

func register(name string, newCmd func(*factory) *cobra.Command) {
	commands = append(commands, registered{name, newCmd})
}

// command adapts a command's constructor to register and AddCommand: the
// command as hone runs it, with no runF standing in for its run function.
func command[O any](newCmd func(*factory, func(*O) error) *cobra.Command) func(*factory) *cobra.Command {
	return func(f *factory) *cobra.Command { return newCmd(f, nil) }
}

// onlyCommand returns the top-level command args run when it can be built
// alone: args start with its name. Every other invocation (help, completion,
// flags before the command, a typo that wants suggestions) gets the whole
// tree. Building the flags and help of every command is a tenth of a hone
// start.
func onlyCommand(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.name
		}
	}
	return ""
}

// newRoot builds the command tree for args: the whole tree, or only the
// command args name (see onlyCommand).
func newRoot(f *factory, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "hone",
		Short: "The trust layer for performance optimization",
		Long: `hone profiles a target, keeps a git-native ledger of every optimization attempt,
serves optimization playbooks, shows the target's source at its pinned commit,
applies patches only inside the target's allowlist, and runs gates and an
interleaved benchmark with confidence intervals to reach a verdict.

All state lives in the git repository: ledger entries on the hone/ledger branch,
verdicts as notes under refs/notes/hone, patches under refs/hone/patches/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Only a non-empty Version gives --version; the text is resolved when
		// printed, so reading the build info stays off every other start.
		Version: version,
		Example: `  hone demo --keep /tmp/tour
  hone ledger --json`,
	}
	cobra.AddTemplateFunc("honeVersion", honeVersion)
	cobra.AddTemplateFunc("exitStatus", exitStatus)
	root.SetVersionTemplate("hone version {{honeVersion}}\n")
	root.SetHelpTemplate(helpTemplate)
	root.SetIn(f.io.In)
	root.SetOut(f.io.Out)
	root.SetErr(f.io.ErrOut)
	root.PersistentPreRun = func(c *cobra.Command, args []string) { f.io.quiet = jsonFlag(c) }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return errs.Usagef("%s; see `%s --help`", err.Error(), c.CommandPath())
	})
	only := onlyCommand(args)
	for _, c := range commands {
		if only == "" || c.name == only {
			root.AddCommand(c.new(f))
		}
	}
	// A named command cannot reach cobra's completion command, whose four
	// shell subcommands would otherwise be built at every start.
	root.CompletionOptions.DisableDefaultCmd = only != ""
	documentBuiltins(root)
	return root
}

// Main runs hone with args and returns the exit status. Errors are printed
// here and nowhere else: as one line on stderr, or with --json as
// {"error": {"code": ..., "message": ...}}.
func Main(args []string) int {
	return (&factory{io: systemStreams()}).run(args)
}

// leadingJSON moves a --json given before the command (`hone --json ledger`,
// as gh and kubectl users type it) to the command's own flags, where every
// command that prints data defines it; a command without one then says so
// as any unknown flag does.
func leadingJSON(args []string) []string {
	n := 0
	for n < len(args) && args[n] == "--json" {
		n++
	}
	if n == 0 || n == len(args) {
		return args
	}
	rest := slices.Clone(args[n:])
	if i := slices.Index(rest, "--"); i >= 0 {
		return slices.Insert(rest, i, "--json")
	}
	return append(rest, "--json")
}

// run executes one hone invocation on the factory's streams.
func (f *factory) run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args = leadingJSON(args)
	root := newRoot(f, args)
	root.SetArgs(args)
	cmd, err := root, checkSubcommands(root, args)
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
	}
	if err == nil {
		return 0
	}
	var he *errs.Error
	if !errors.As(err, &he) {
		// cobra's own errors (required flags, bad arguments) arrive untyped
		// and before any RunE ran; anything untyped from a RunE is hone's
		// failure.
		if cmd == nil || !cmdRan(cmd) {
			err = errs.Usagef("%s", strings.TrimSpace(err.Error()))
		} else {
			err = errs.Wrap(errs.Failure, err, "hone")
		}
	}
	if cmd == nil {
		cmd = root
	}
	return writeError(f.io.ErrOut, withHelpPointer(err, cmd), jsonFlag(cmd) || wantsJSON(args))
}

// maxMessage bounds a printed error. Messages name the input they refuse
// and never echo it (errs clips long arguments); this is the last guard,
// for causes quoted from other tools.
const maxMessage = 4096

// oneLine joins a multi-line message into the one line every error gets,
// dropping blank lines and indentation.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

func jsonFlag(cmd *cobra.Command) bool {
	fl := cmd.Flags().Lookup("json")
	return fl != nil && fl.Value.String() == "true"
}

// wantsJSON finds --json among the arguments when parsing stopped before the
// flag was read (an unknown flag or command), so the error is still JSON.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

const ranAnnotation = "hone-ran"

func cmdRan(cmd *cobra.Command) bool { return cmd.Annotations[ranAnnotation] == "1" }

// run adapts a command's work function: it marks the command as having started
// (so untyped errors are not mistaken for usage errors) and passes the context.
func run(f func(ctx context.Context, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if cmd.Annotations == nil {
			cmd.Annotations = map[string]string{}
		}
		cmd.Annotations[ranAnnotation] = "1"
		return f(cmd.Context(), cmd, args)
	}
}

// runCommand is the RunE of a command built from options: parse (when
// given) takes the arguments into opts and checks what cobra cannot, then
// a test's runF gets the options, or else the command's own run does.
func runCommand[O any](opts *O, runF func(*O) error, parse func(*cobra.Command, []string) error, work func(context.Context, *O) error) func(*cobra.Command, []string) error {
	return run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		if parse != nil {
			if err := parse(cmd, args); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(opts)
		}
		return work(ctx, opts)
	})
}

// Argument validators that fail with exit code 2.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return errs.Usagef("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return errs.Usagef("%s takes %d to %d arguments, got %d", cmd.CommandPath(), min, max, len(args))
		}
		return nil
	}
}

// optionalArg is a command's one optional argument (rangeArgs(0, 1)), or
// "" when it was left out.
func optionalArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return ""
}
