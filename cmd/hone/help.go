package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
)

// exitAnnotation holds, on a command, the exit codes it can return beyond
// 0, 1 and 2, as a comma-separated list of numbers.
const exitAnnotation = "hone-exit-codes"

// exits declares the codes a command can return beyond success, failure
// and usage, for the EXIT STATUS section that ends its help. It is the
// command's Annotations.
func exits(codes ...errs.Code) map[string]string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(int(c))
	}
	return map[string]string{exitAnnotation: strings.Join(s, ",")}
}

// exitCodesOf is every code c can return: 0, 1 and 2, the codes it
// declares, and for a command with subcommands every code of theirs too.
func exitCodesOf(c *cobra.Command) []errs.Code {
	set := map[errs.Code]bool{0: true, errs.Failure: true, errs.Usage: true}
	var add func(c *cobra.Command)
	add = func(c *cobra.Command) {
		for _, s := range strings.Split(c.Annotations[exitAnnotation], ",") {
			if n, err := strconv.Atoi(s); err == nil {
				set[errs.Code(n)] = true
			}
		}
		for _, sub := range c.Commands() {
			add(sub)
		}
	}
	add(c)
	codes := make([]errs.Code, 0, len(set))
	for code := range set {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}

// exitStatus renders the EXIT STATUS section every help page ends with.
func exitStatus(c *cobra.Command) string {
	var b strings.Builder
	b.WriteString("\nEXIT STATUS\n")
	for _, code := range exitCodesOf(c) {
		fmt.Fprintf(&b, "  %-3d %s\n", int(code), exitCodeMeaning(code))
	}
	return b.String()
}

func exitCodeMeaning(c errs.Code) string {
	switch c {
	case 0:
		return "success"
	case errs.Failure:
		return "hone or its environment failed (git, perf, disk)"
	case errs.Usage:
		return "usage error: unknown command or flag, missing or extra argument"
	case errs.Policy:
		return "refused by policy (allowlist, protected path, duplicate attempt, size limit, worktree rule)"
	case errs.NotFound:
		return "not found (target, patch, entry, playbook class, path at the pin)"
	case errs.Invalid:
		return "invalid input (malformed diff, hone.toml error, corrupt ledger entry, ambiguous id prefix)"
	case errs.Busy:
		return "busy: a lock is held by another live process"
	case errs.NotAccepted:
		return "with --exit-code: the verdict is not accepted"
	}
	return c.Name()
}

// helpTemplate is cobra's own, with the EXIT STATUS section moved to the
// very end, after the flags, where readers of man pages and restic's help
// look for it.
const helpTemplate = `{{with (or .Long .Short)}}{{. | trimTrailingWhitespaces}}

{{end}}{{if or .Runnable .HasSubCommands}}{{.UsageString}}{{end}}{{exitStatus .}}`

// withExitStatus appends the EXIT STATUS section to the long help of every
// command of root's tree, for the reference pages, which are rendered from
// Long rather than from the help template.
func withExitStatus(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		long := c.Long
		if long == "" {
			long = c.Short
		}
		c.Long = strings.TrimRight(long, "\n") + "\n" + strings.TrimRight(exitStatus(c), "\n")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// documentBuiltins gives the commands cobra makes itself (help, completion
// and its shells) the examples every hone command has, and makes completion
// refuse an unknown shell.
func documentBuiltins(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  hone help verdict\n  hone help ledger push"
		case "completion":
			c.Example = "  hone completion bash > /etc/bash_completion.d/hone\n  source <(hone completion zsh)"
			for _, sh := range c.Commands() {
				sh.Example = fmt.Sprintf("  hone completion %s > hone.%s", sh.Name(), sh.Name())
			}
			// Without this, cobra answers an unknown shell with help and status 0.
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return cmd.Help()
				}
				return errs.Usagef("unknown shell %q; `hone completion` supports bash, zsh, fish and powershell", args[0])
			}
		}
	}
}
