package main

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command's help, cobra's own help and completion included, says
// what the command does, shows an example, and ends with an EXIT STATUS
// section; a command with subcommands lists every code they can return.
func TestEveryHelpHasAnExampleAndEndsWithExitStatus(t *testing.T) {
	root := newRoot(testFactory(), nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatalf("%q: %v", c.CommandPath(), err)
		}
		help := out.String()
		if c.HasParent() && (c.Short == "" || strings.Contains(c.Short, "\n")) {
			t.Errorf("%q: short help %q is not one line", c.CommandPath(), c.Short)
		}
		if c.Example == "" || !strings.Contains(help, "\nExamples:\n  ") {
			t.Errorf("%q: help shows no example", c.CommandPath())
		}
		i := strings.LastIndex(help, "\nEXIT STATUS\n")
		if i < 0 {
			t.Errorf("%q: help has no EXIT STATUS section", c.CommandPath())
		} else if tail := help[i+len("\nEXIT STATUS\n"):]; !exitLines.MatchString(tail) {
			t.Errorf("%q: help does not end with EXIT STATUS; after it comes:\n%s", c.CommandPath(), tail)
		}
		for _, sub := range c.Commands() {
			for _, code := range exitCodesOf(sub) {
				if !slices.Contains(exitCodesOf(c), code) {
					t.Errorf("%q does not list exit code %d of %q", c.CommandPath(), code, sub.CommandPath())
				}
			}
			walk(sub)
		}
	}
	walk(root)
}

// exitLines matches an EXIT STATUS section's body and nothing after it.
var exitLines = regexp.MustCompile(`^(  [0-9]+ +[^\n]+\n)+$`)

func testFactory() *factory {
	return &factory{io: &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}}
}

// An invocation that names its command builds only that command, and must
// find exactly what the whole tree would: each command is registered under
// the name it builds, and its help reads the same either way.
func TestNamedInvocationBuildsTheSameCommand(t *testing.T) {
	full := newRoot(testFactory(), nil)
	for _, c := range commands {
		root := newRoot(testFactory(), []string{c.name, "--help"})
		var names []string
		for _, sub := range root.Commands() {
			if sub.Name() != "help" && sub.Name() != "completion" {
				names = append(names, sub.Name())
			}
		}
		if len(names) != 1 || names[0] != c.name {
			t.Errorf("hone %s builds commands %v, want only %q", c.name, names, c.name)
			continue
		}
		want, _, err := full.Find([]string{c.name})
		if err != nil {
			t.Fatalf("the whole tree has no %q: %v", c.name, err)
		}
		got, _, _ := root.Find([]string{c.name})
		if got.UsageString() != want.UsageString() || got.Long != want.Long {
			t.Errorf("hone %s: help differs between the lone command and the whole tree", c.name)
		}
	}
	for _, args := range [][]string{nil, {"--help"}, {"help", "ledger"}, {"ledgr"}, {"__complete", "le"}} {
		if n := len(newRoot(testFactory(), args).Commands()); n < len(commands) {
			t.Errorf("hone %v builds %d commands, want the whole tree", args, n)
		}
	}
}

// Every path a command takes, as a flag (--file FILE) or an argument (DIR),
// says in its help what it is relative to.
func TestEveryPathSaysWhatItIsRelativeTo(t *testing.T) {
	paths := map[string]bool{"FILE": true, "DIR": true, "PATH": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if name, usage := pflag.UnquoteUsage(f); paths[name] && !strings.Contains(usage, "relative to") {
				t.Errorf("%s --%s: %q does not say what %s is relative to", c.CommandPath(), f.Name, usage, name)
			}
		})
		words := strings.Fields(c.Use)
		for i, w := range words {
			if paths[strings.Trim(w, "[]")] && !strings.HasPrefix(words[i-1], "--") && !strings.HasPrefix(words[i-1], "[--") &&
				!strings.Contains(c.Long, "relative to") {
				t.Errorf("%s: its %s argument's help does not say what it is relative to", c.CommandPath(), w)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(testFactory(), nil))
}
