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
	root := newRoot(&App{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
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
