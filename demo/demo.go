// Package demo is hone's built-in example and the scripted session that
// `hone demo` narrates: a small C program whose word table is a linear scan
// (a real, fixable hotspot), its unit test, a generated golden corpus, a
// hone.toml with an equivalence gate, and four patches: a hash-table fix, the
// same fix smuggling an edit of hone.toml, the same idea again, and a
// "length check first" change that is slower.
//
// The session runs the real hone binary, so every command it shows is
// exactly what ran. Nothing here prints; the caller renders the Events.
package demo

import (
	"context"
	"embed"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

//go:embed all:example
var exampleFS embed.FS

//go:embed patches/*.diff
var patchFS embed.FS

// Example names inside the workspace Create makes.
const (
	Target     = "wordfreq"
	TargetPath = "targets/wordfreq"
	CorpusPath = TargetPath + "/testdata/corpus.txt"
	PatchDir   = "patches" // the demo's diffs, committed so a reader can re-propose them
)

// Create makes the example workspace in dir, which must not exist or be
// empty: the example's files, the generated corpus and the demo's patches,
// committed on branch main (the target's pin) with a fixed identity, so the
// commit is the same on every machine and needs no git configuration.
func Create(ctx context.Context, dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return errs.Policyf("%s is not empty; hone demo only creates its workspace in a new or empty directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", dir)
	}
	write := func(name string, data []byte) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot create %s", filepath.Dir(p))
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot write %s", p)
		}
		return nil
	}
	err := fs.WalkDir(exampleFS, "example", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := exampleFS.ReadFile(name)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("example", name)
		return write(filepath.ToSlash(rel), data)
	})
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the example")
	}
	if err := write(CorpusPath, Corpus()); err != nil {
		return err
	}
	names, _ := fs.Glob(patchFS, "patches/*.diff")
	for _, name := range names {
		data, _ := patchFS.ReadFile(name)
		if err := write(path.Join(PatchDir, path.Base(name)), data); err != nil {
			return err
		}
	}
	env := []string{
		"GIT_AUTHOR_NAME=hone demo", "GIT_AUTHOR_EMAIL=demo@hone.invalid", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME=hone demo", "GIT_COMMITTER_EMAIL=demo@hone.invalid", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	}
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "--all"},
		{"commit", "--quiet", "--no-verify", "--message", "wordfreq: count word frequencies"},
	} {
		if _, err := git.Run(ctx, git.Cmd{Dir: dir, Args: args, Env: env, Isolated: true}); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot create the demo repository")
		}
	}
	return nil
}
