// Package patch turns a unified diff into a patch commit only when it changes
// nothing but its target's allowlist. A diff is read strictly (front check),
// applied by git itself into a throwaway index built from the pin, and what
// git reports as changed is checked again; that second check is the
// authority. Package guard applies the same rules (package allowlist) to
// commits, pushes and staged changes, for git hooks.
package patch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Proposal is the ledger entry of a proposed patch.
type Proposal struct {
	ledger.Common
	Files   []string `toml:"files" json:"files"`
	Added   int      `toml:"added" json:"added"`
	Removed int      `toml:"removed" json:"removed"`
	// ConfigBlob is the hone.toml blob at the pin (the patch commit's
	// parent), which the protected tip accepted as its own goalposts'.
	ConfigBlob string `toml:"config_blob,omitempty" json:"config_blob,omitempty"`
	// PinRef is the pin as the protected tip names it, resolved to a full
	// ref name (or the commit it names); Pin is the commit proposed at.
	PinRef string `toml:"pin_ref,omitempty" json:"pin_ref,omitempty"`
	// NormalizedSHA256 is the hash of the patch's normalised form (see
	// normalize.go): equal for the same code in other words.
	NormalizedSHA256 string `toml:"normalized_sha256,omitempty" json:"normalized_sha256,omitempty"`
	// Retries is the verdict of the same idea (same attempt key or
	// normalised diff) at an earlier pin, which this proposal tries again
	// now that the pin has moved.
	Retries string `toml:"retries,omitempty" json:"retries,omitempty"`
	// PinUnprotected was set by earlier versions when the pin was not on
	// the protected base; such a pin is now refused, so only old entries
	// carry it.
	PinUnprotected bool `toml:"pin_unprotected,omitempty" json:"pin_unprotected,omitempty"`
	// Author is who proposed the patch, "Name <email>": the author of the
	// commit `hone patch land` makes. The patch commit itself has hone's
	// fixed identity, so the same diff is the same commit in every clone.
	Author string `toml:"author,omitempty" json:"author,omitempty"`
}

// Request is one proposal: an idea (hotspot, playbook class, hypothesis) and
// the diff that tries it, against the target's pin.
type Request struct {
	Target     string
	Hotspot    string
	Class      int
	Hypothesis string
	Diff       []byte
	// Author is "Name <email>"; empty means the repository's git user.
	Author string
}

// Result is a stored patch. Existing is true when the same diff had been
// proposed on the same pin before: the id is the earlier one and no entry was
// added. Warnings are advice for the optimizer, never a refusal.
type Result struct {
	PatchID  string         `json:"patch_id"`
	Commit   string         `json:"commit"`
	Existing bool           `json:"existing"`
	Warnings []errs.Warning `json:"warnings"`
	Proposal *Proposal      `json:"proposal"`
}

// Checked is a diff that passed every check, applied but stored nowhere.
type Checked struct {
	Target  string       `json:"target"`
	Pin     string       `json:"pin"`
	Tree    string       `json:"tree"`
	Changes []git.Change `json:"changes"`
	Summary
	// goal is what the diff was checked against: the target as hone.toml
	// at the protected tip defines it.
	goal *workspace.Goalposts
}

// MaxClass is the number of playbook classes; classes are 1..MaxClass.
const MaxClass = 7

// Check runs the front check and git's apply into a throwaway index, and
// checks what git changed. Nothing is stored.
func Check(ctx context.Context, ws *workspace.Workspace, target string, diff []byte) (*Checked, error) {
	c, idx, err := check(ctx, ws, target, diff)
	if idx != nil {
		idx.close()
	}
	return c, err
}

// The working tree's hone.toml may ask for a pin; the protected tip decides
// whether it is acceptable, and every rule (the allowlist, the diff limit)
// is the tip's, which no uncommitted edit changes.
func check(ctx context.Context, ws *workspace.Workspace, target string, diff []byte) (*Checked, *scratchIndex, error) {
	gp, err := ws.Proposing(ctx, target)
	if err != nil {
		return nil, nil, err
	}
	pin := gp.Pin
	a := gp.Target.Rules()
	sum, err := frontCheck(diff, a, gp.Config.Patch.MaxDiffBytes)
	if err != nil {
		return nil, nil, relativeHint(ws, pin, a, diff, err)
	}
	idx, err := newScratchIndex(ctx, ws.Repo)
	if err != nil {
		return nil, nil, err
	}
	var (
		tree    string
		changes []git.Change
	)
	if root, ok := subtree(ws.Store(""), pin, a.Root); ok {
		tree, changes, err = idx.applyPartial(ctx, ws.Store(""), pin, a.Root, root, diff)
	} else {
		tree, changes, err = idx.applyFull(ctx, pin, diff)
	}
	if err != nil {
		return nil, idx, err
	}
	if err := authority(changes, a); err != nil {
		return nil, idx, err
	}
	return &Checked{Target: target, Pin: pin, Tree: tree, Changes: changes, Summary: *sum, goal: gp}, idx, nil
}

// relativeHint adds to a refusal how to remake a diff whose paths are
// relative to the target (git diff --relative, or a diff made inside the
// target with a path limit): every name is outside the target, would be
// allowed under it, and one of them exists there at the pin.
func relativeHint(ws *workspace.Workspace, pin string, a allowlist.Rules, diff []byte, err error) error {
	if !errs.Is(err, errs.Policy) || a.Root == "." {
		return err
	}
	files, _, perr := gitdiff.Parse(bytes.NewReader(diff))
	if perr != nil || len(files) == 0 {
		return err
	}
	st := ws.Store("")
	commit, cerr := st.ReadCommit(repo.NewHash(pin))
	if cerr != nil {
		return err
	}
	exists := false
	for _, f := range files {
		for _, n := range []string{f.OldName, f.NewName} {
			if n == "" {
				continue
			}
			full := a.Root + "/" + n
			if strings.HasPrefix(n, a.Root+"/") || a.Rule(full) != "" {
				return err
			}
			if _, ferr := repo.EntryAt(st, commit.Tree, full); ferr == nil {
				exists = true
			}
		}
	}
	if !exists {
		return err
	}
	return &errs.Error{Code: errs.Policy, Err: err, Msg: err.Error() +
		"; the diff's paths look relative to the target (as `git diff --relative` writes them): make it from the repository's top level with plain `git diff`"}
}

// validate checks the idea's fields; bad values are usage errors, as they
// come from flags or tool arguments. Oversized text is refused by the
// limits of [patch] in hone.toml, by its length alone: the message never
// quotes it.
func (r *Request) validate(lim workspace.PatchConfig) error {
	switch {
	case len(r.Hypothesis) > lim.MaxHypothesisBytes:
		return errs.Policyf("refused: the hypothesis is %d bytes, over the limit of %d ([patch] max_hypothesis_bytes in hone.toml); state it in a sentence or two", len(r.Hypothesis), lim.MaxHypothesisBytes)
	case len(r.Hotspot) > lim.MaxHotspotBytes:
		return errs.Policyf("refused: the hotspot is %d bytes, over the limit of %d ([patch] max_hotspot_bytes in hone.toml); name one symbol of the profile", len(r.Hotspot), lim.MaxHotspotBytes)
	case strings.TrimSpace(r.Target) == "":
		return errs.Usagef("a target is required")
	case strings.TrimSpace(r.Hotspot) == "":
		return errs.Usagef("a hotspot is required: name the symbol the patch speeds up (see the latest profile)")
	case r.Class < 1 || r.Class > MaxClass:
		return errs.Usagef("class %d is not a playbook class; use 1 to %d", r.Class, MaxClass)
	case ledger.NormalizeHypothesis(r.Hypothesis) == "":
		return errs.Usagef("a hypothesis is required: say in words why the patch should be faster")
	case r.Author != "" && (len(r.Author) > maxAuthorBytes || !authorRE().MatchString(r.Author)):
		return errs.Usagef("--author %q is not \"Name <email>\" on one line of at most %d bytes", r.Author, maxAuthorBytes)
	}
	return nil
}

const maxAuthorBytes = 256

var authorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[^<>\x00-\x1f\x7f]+ <[^<>\s]+>$`) })

// gitUser is the repository's git user as "Name <email>", or "" when git
// has none configured.
func gitUser(ctx context.Context, dir string) string {
	ident, err := git.Output(ctx, dir, "var", "GIT_AUTHOR_IDENT")
	if err != nil {
		return ""
	}
	if i := strings.LastIndexByte(ident, '>'); i > 0 {
		ident = ident[:i+1]
	}
	if !authorRE().MatchString(ident) {
		return ""
	}
	return ident
}

// ID derives a patch id from what the patch is: the target, the pin and the
// tree it produces. The same diff on the same pin always has the same id.
func ID(target, pin, tree string) string {
	sum := sha256.Sum256([]byte("hone-patch\x00" + target + "\x00" + pin + "\x00" + tree))
	return hex.EncodeToString(sum[:])[:16]
}
