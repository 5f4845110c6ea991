package patch

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
)

// Summary is what a diff changes, as the front check read it.
type Summary struct {
	Files   []string `json:"files"` // every path touched, sorted; a rename lists both names
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
}

// frontCheck reads a diff and applies every rule that can be decided from its
// text alone. Any parse error rejects the whole diff, including files parsed
// before the error. It gives the precise message; the check of what git
// actually changed (see apply.go) is the authority.
func frontCheck(diff []byte, a allowlist.Rules, maxBytes int64) (*Summary, error) {
	if len(bytes.TrimSpace(diff)) == 0 {
		return nil, errs.Invalidf("empty diff: give a unified diff from `git diff` on stdin or with --file")
	}
	if maxBytes > 0 && int64(len(diff)) > maxBytes {
		return nil, errs.Policyf("refused: the diff is over the limit of %d bytes ([patch] max_diff_bytes in hone.toml)", maxBytes)
	}
	raw, err := scanHeaders(diff)
	if err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, errs.Invalidf("malformed diff, refused whole: %v", err)
	}
	if raw == nil {
		if len(files) > 0 {
			return nil, errs.Invalidf("not a git diff: traditional (non-git) headers; make the diff with `git diff` (only `diff --git a/... b/...` diffs are accepted)")
		}
		return nil, errs.Invalidf("no file changes in the diff: give a unified diff from `git diff`")
	}
	if len(raw) != len(files) {
		return nil, errs.Policyf("refused: the diff has %d `diff --git` headers but reads as %d files; headers disagree", len(raw), len(files))
	}
	sum := &Summary{}
	seen := map[string]bool{}
	for i, f := range files {
		if err := checkFile(raw[i], f, a); err != nil {
			return nil, withTheRest(err, f, files, a)
		}
		for _, n := range []string{f.OldName, f.NewName} {
			if n != "" && !seen[n] {
				seen[n] = true
				sum.Files = append(sum.Files, n)
			}
		}
		for _, frag := range f.TextFragments {
			sum.Added += int(frag.LinesAdded)
			sum.Removed += int(frag.LinesDeleted)
		}
	}
	sort.Strings(sum.Files)
	return sum, nil
}

// withTheRest adds to err, the refusal of file f by the allowlist, how to
// propose the rest of the diff when the rest is inside it: an upstream
// optimisation often comes with a test of its own, which is protected.
func withTheRest(err error, f *gitdiff.File, files []*gitdiff.File, a allowlist.Rules) error {
	if a.Rule(fileName(f)) == "" {
		return err
	}
	var out, in []string
	for _, g := range files {
		if n := fileName(g); a.Rule(n) != "" {
			out = append(out, "':(exclude)"+n+"'")
		} else {
			in = append(in, n)
		}
	}
	if len(in) == 0 {
		return err
	}
	return errs.Policyf("%v; the rest of the diff (%s) is inside the allowlist: propose it alone, e.g. from `git diff -- . %s`", err, clipList(in), strings.Join(out, " "))
}

// fileName is the name a file of a diff is known by: its new name, or the
// old one when it is deleted.
func fileName(f *gitdiff.File) string {
	if f.IsDelete {
		return f.OldName
	}
	return f.NewName
}

// clipList names at most three files.
func clipList(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:3], ", "), len(names)-3)
}

// checkFile compares go-gitdiff's reading of one file with its raw headers,
// then applies the path and mode rules to every name.
func checkFile(r *rawFile, f *gitdiff.File, a allowlist.Rules) error {
	oldN, newN := f.OldName, f.NewName
	if f.IsNew {
		oldN = newN
	}
	if f.IsDelete {
		newN = oldN
	}
	where := fmt.Sprintf("line %d", r.line)
	switch {
	case f.IsCopy || r.copy:
		return refusal(newN, "copies are not accepted (a copy can read a file from outside the allowlist)")
	case f.IsBinary || r.binary:
		return refusal(newN, "binary patches are not accepted")
	case f.IsNew && f.IsDelete:
		return refusal(newN, "a file header both creates and deletes the file")
	case r.gitSplit && (r.gitOld != oldN || r.gitNew != newN):
		return refusal(r.gitOld, fmt.Sprintf("%s: `diff --git` names disagree with the other headers (%q -> %q)", where, oldN, newN))
	case !r.gitSplit && r.gitRest != "a/"+oldN+" b/"+newN:
		return refusal(oldN, fmt.Sprintf("%s: `diff --git %s` disagrees with the other headers", where, clip(r.gitRest)))
	case r.hasMinus && (r.minus == devNull) != f.IsNew,
		r.hasMinus && r.minus != devNull && r.minus != oldN:
		return refusal(oldN, fmt.Sprintf("%s: the --- line (%q) disagrees with the other headers", where, r.minus))
	case r.hasPlus && (r.plus == devNull) != f.IsDelete,
		r.hasPlus && r.plus != devNull && r.plus != newN:
		return refusal(newN, fmt.Sprintf("%s: the +++ line (%q) disagrees with the other headers", where, r.plus))
	case f.IsRename && (r.renameFrom != oldN || r.renameTo != newN),
		!f.IsRename && (r.renameFrom != "" || r.renameTo != ""):
		return refusal(oldN, fmt.Sprintf("%s: rename from/to disagree with the other headers", where))
	}
	for _, n := range append(r.names(), oldN, newN) {
		if rule := a.Rule(n); rule != "" {
			return refusal(n, rule)
		}
	}
	for _, m := range []uint32{uint32(f.OldMode), uint32(f.NewMode)} {
		if rule := allowlist.ModeRule(m); rule != "" {
			return refusal(newN, rule)
		}
	}
	return nil
}
