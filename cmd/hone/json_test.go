package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"
)

// Every command that has a --json flag is run with it by a script
// (json_keys.txtar runs most of them) and its output checked there by
// jsonkeys, so a new command cannot print JSON that nobody checked for
// snake_case keys and null values.
func TestJSONKeysScriptRunsEveryJSONCommand(t *testing.T) {
	scripts, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	root := newRoot(testFactory(), nil)
	checked := map[string]bool{}
	for _, script := range scripts {
		ar, err := txtar.ParseFile(script)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(ar.Comment), "\n")
		for i, l := range lines {
			_, invocation, ok := strings.Cut(l, "hone ")
			if !strings.HasPrefix(l, "exec ") || !ok || !strings.Contains(l, "--json") || i+1 == len(lines) || lines[i+1] != "jsonkeys" {
				continue
			}
			words := strings.Fields(strings.NewReplacer("'", " ", `"`, " ").Replace(invocation))
			if c, _, err := root.Find(words); err == nil {
				checked[c.CommandPath()] = true
			}
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("json") != nil && !c.Hidden && !checked[c.CommandPath()] {
			t.Errorf("no script runs %q with --json followed by jsonkeys", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(checked) < 30 {
		t.Errorf("json_keys.txtar checks only %d commands", len(checked))
	}
}
