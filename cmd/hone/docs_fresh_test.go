package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// refreshCommandReference is what a contributor runs, from the repository's
// top level, after changing a command's help, flags or examples.
const refreshCommandReference = "rm -rf docs/commands && go run ./cmd/hone docs markdown docs/commands"

// The committed command reference is what `hone docs markdown` writes now:
// a command, flag or example changed without regenerating it would leave
// docs/commands describing a CLI hone no longer has.
func TestDocsCommandReferenceIsFresh(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "commands")
	if _, stderr, code := honeIn(t.TempDir(), "docs", "markdown", fresh); code != 0 {
		t.Fatalf("hone docs markdown exited %d: %s", code, stderr)
	}
	committed := filepath.Join("..", "..", "docs", "commands")

	want := markdownFiles(t, fresh)
	got := markdownFiles(t, committed)
	var stale []string
	for _, name := range want {
		old, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			stale = append(stale, name+" (missing)")
			continue
		}
		now, err := os.ReadFile(filepath.Join(fresh, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(old, now) {
			stale = append(stale, name+" (differs)")
		}
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			stale = append(stale, name+" (no such command any more)")
		}
	}
	if len(stale) > 0 {
		t.Errorf("docs/commands is stale: %v\nrefresh it with: %s", stale, refreshCommandReference)
	}
}

func markdownFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	if len(names) == 0 {
		t.Fatalf("no pages in %s; generate them with: %s", dir, refreshCommandReference)
	}
	return names
}
