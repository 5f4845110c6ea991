package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every command, including cobra's own help and completion, documents its
// exit codes and has a one-line summary for `hone --help`.
func TestEveryCommandDocumentsExitStatus(t *testing.T) {
	root := newRoot(testApp(), nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !strings.Contains(c.Long, "\nEXIT STATUS\n") {
			t.Errorf("%q: long help has no EXIT STATUS section", c.CommandPath())
		}
		if c.HasParent() && (c.Short == "" || strings.Contains(c.Short, "\n")) {
			t.Errorf("%q: short help %q is not one line", c.CommandPath(), c.Short)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func testApp() *App { return &App{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard} }

// An invocation that names its command builds only that command, and must
// find exactly what the whole tree would: each command is registered under
// the name it builds, and its help reads the same either way.
func TestNamedInvocationBuildsTheSameCommand(t *testing.T) {
	full := newRoot(testApp(), nil)
	for _, c := range commands {
		root := newRoot(testApp(), []string{c.name, "--help"})
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
		if n := len(newRoot(testApp(), args).Commands()); n < len(commands) {
			t.Errorf("hone %v builds %d commands, want the whole tree", args, n)
		}
	}
}
