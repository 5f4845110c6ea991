package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
)

// isGroup reports whether c only holds subcommands: a word after it can only
// name one of them.
func isGroup(c *cobra.Command) bool { return c.HasSubCommands() && !c.Runnable() }

// checkSubcommands refuses a word that names no subcommand of a group, at
// any depth (`hone patch propse`), before cobra would answer it with the
// group's help and status 0. `hone help WORDS` is checked the same way.
// Groups take no flags with values, so every word not starting with "-"
// names a command.
func checkSubcommands(root *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == "help" || strings.HasPrefix(args[0], cobra.ShellCompRequestCmd)) {
		if args[0] != "help" {
			return nil
		}
		args = args[1:]
	}
	c := root
	for _, a := range args {
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "-"):
			continue
		case !isGroup(c):
			return nil
		}
		sub := subcommand(c, a)
		if sub == nil {
			return unknownCommand(c, a, suggestions(c, a))
		}
		c = sub
	}
	return nil
}

func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if sub.Name() == name || sub.HasAlias(name) {
			return sub
		}
	}
	return nil
}

// suggestions are the subcommands of c that name is a near miss of, by
// cobra's own rule (edit distance at most 2, or a prefix).
func suggestions(c *cobra.Command, name string) []string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	return c.SuggestionsFor(name)
}

// unknownCommand is the one-line usage error for a word that names no
// subcommand of c, for example
//
//	unknown command "propse" for "hone patch"; did you mean "propose"? see `hone patch --help`
func unknownCommand(c *cobra.Command, name string, near []string) error {
	hint := ""
	if len(near) > 0 {
		q := make([]string, len(near))
		for i, s := range near {
			q[i] = fmt.Sprintf("%q", s)
		}
		hint = " did you mean " + strings.Join(q, " or ") + "?"
	}
	return errs.Usagef("unknown command %q for %q;%s see `%s --help`", name, c.CommandPath(), hint, c.CommandPath())
}

// nearMiss refuses an argument of a command that takes either a name or a
// subcommand in the same position (`hone ledger TARGET`) when the argument
// is not a known name but close to a subcommand: `hone ledger verfy` is a
// typo, not a target. isName is consulted only for near misses.
func nearMiss(c *cobra.Command, arg string, isName func() bool) error {
	near := suggestions(c, arg)
	if len(near) == 0 || isName() {
		return nil
	}
	return unknownCommand(c, arg, near)
}

// withHelpPointer makes a usage error end by pointing at the help of the
// command it came from, unless its message already points at one.
func withHelpPointer(err error, c *cobra.Command) error {
	if errs.CodeOf(err) != errs.Usage || strings.Contains(err.Error(), " --help`") {
		return err
	}
	return &errs.Error{Code: errs.Usage, Msg: fmt.Sprintf("%s; see `%s --help`", err.Error(), c.CommandPath()), Err: err}
}
