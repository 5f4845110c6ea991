package repo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/hone-perf/hone/internal/errs"
)

// supportedExtensions are the extensions.* settings hone works under: the
// two that change nothing. Every other extension changes something hone's
// readers (go-git, which refuses them too, with a message naming go-git)
// and its own writers (objects.go and pack.go in ledger, refs.go here)
// rely on: sha256 object names, reftable refs, objects promised by a
// remote, per-worktree config, objects that must never be pruned. Even an
// explicit objectFormat = sha1 is refused, as go-git refuses it. A
// repository that sets one is refused before anything is written.
var supportedExtensions = map[string]bool{"noop": true, "noop-v1": true}

// checkFormat refuses a repository whose format hone cannot read and
// write faithfully: a repositoryformatversion above 1, or an extension not
// in supportedExtensions. It reads the common config file only: git takes
// the format and extensions from there alone.
func checkFormat(commonDir string) error {
	path := filepath.Join(commonDir, "config")
	f, err := os.Open(path)
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot read the repository's config %s", path)
	}
	defer f.Close()
	cfg := config.New()
	if err := config.NewDecoder(f).Decode(cfg); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot parse the repository's config %s", path)
	}
	if v := cfg.Section("core").Option("repositoryformatversion"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n > 1 {
			return errs.Failuref("repository %s has core.repositoryformatversion = %s, which hone does not support; use a repository git made with format version 0 or 1", commonDir, v)
		}
	}
	for _, o := range cfg.Section("extensions").Options {
		if supportedExtensions[strings.ToLower(o.Key)] {
			continue
		}
		return errs.Failuref("repository %s sets extensions.%s = %s, which hone does not support; use a repository without extensions (sha1 objects, files refs)", commonDir, o.Key, o.Value)
	}
	return nil
}
