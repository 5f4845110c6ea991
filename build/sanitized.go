package build

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/sanitize"
)

// shimDir is where a sanitizer or layout side's compiler shim is bound,
// first on PATH.
const shimDir = "/hone/shim"

// sanitized is what a sanitizer side adds to every command it runs: the
// variables of sanitize.Env (its compiler shim is the side's).
type sanitized struct {
	env []string
}

// sanitizer prepares the sanitizer build of commit: the languages of the
// target's files (of the whole tree when the target's own say nothing, as
// for a Go package whose go.mod is above it), their flags and runtime
// options, and a shim for each C and C++ compiler on the jail's PATH.
func (r *Run) sanitizer(c *repo.Commit, shim string, sanitizers []string) (*sanitized, error) {
	langs, err := r.languages(c)
	if err != nil {
		return nil, err
	}
	env, err := sanitize.Env(langs, sanitizers)
	if err != nil {
		return nil, err
	}
	// Go takes its sanitizer from GOFLAGS; a shim would add the C
	// runtime's too under cgo, and link two of them.
	if slices.Contains(langs, sanitize.Go) {
		if err := os.Mkdir(shim, 0o755); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot create %s", shim)
		}
	} else if _, err := sanitize.Shim(shim, sanitizers, r.shimSearch()); err != nil {
		return nil, err
	}
	return &sanitized{env: env}, nil
}

// shimSearch is the PATH a build runs with, as host folders: hone's own
// toolchain folders the jail can see, then the jail's system PATH.
func (r *Run) shimSearch() []string {
	search := toolPath(r.sandbox.ReadOnly)
	for _, kv := range jail.Environment("/", nil, nil) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			search = append(search, filepath.SplitList(p)...)
		}
	}
	return search
}

// merge adds the sanitizer variables to a side's environment; GOFLAGS,
// which both set, gets both.
func (z *sanitized) merge(env []string) []string {
	out := append([]string{}, env...)
	for _, kv := range z.env {
		k, v, _ := strings.Cut(kv, "=")
		replaced := false
		for i, old := range out {
			if ok := strings.HasPrefix(old, k+"="); ok && k == "GOFLAGS" {
				out[i], replaced = old+" "+v, true
			} else if ok {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}
