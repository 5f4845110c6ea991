package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
)

// Goalposts are what judges a target's patches: every rule (the target's
// allowlist, build, gates and bench, the protocol, the jail settings, the
// patch limits) as hone.toml holds it at the tip of the protected base, the
// maintainer's current word. Nothing an agent writes chooses them: not a
// working tree, not a pin, not a ledger entry. The files those rules name
// (gate scripts, test data, harnesses) are read at Pin, which the tip
// accepted because its goalposts equal the current pin's.
type Goalposts struct {
	// Committed is hone.toml at the protected tip (Commit, Blob, Config).
	*Committed
	Target *Target
	// Pin is the accepted pin (40-hex) the patch is judged at.
	Pin string
	// Current is the commit the tip's pin names now, and PinRef that pin
	// as a full ref name (or the commit it names).
	Current, PinRef string
	// PinBlob is the id of hone.toml's blob at Pin ("" when it has none).
	PinBlob string
	// Base names the protected base refs, and BaseRef the one the tip was
	// read from.
	Base    []string
	BaseRef string
	// Warnings: the working tree's hone.toml differs from the tip's.
	Warnings []errs.Warning
}

// Judge returns the goalposts of target for a patch at pin (a 40-hex
// commit), read from the protected tip of repository r, which may be bare (a
// server's hook calls it). A pin the tip does not accept is a
// *StalePinError (errs.Policy, reason ReasonStalePin): acceptable are the
// current pin and an earlier current pin (on the first-parent history of
// the current one) whose hone.toml blob, protected paths and target folder
// equal the current pin's: main may have moved on elsewhere, never in the
// code the patch is judged on. A target the tip does not define is NotFound.
func Judge(ctx context.Context, r *repo.Repo, target, pin string) (*Goalposts, error) {
	g, err := Tip(ctx, r, target)
	if err != nil {
		return nil, err
	}
	if err := g.accept(ctx, r, pin); err != nil {
		return nil, err
	}
	return g, nil
}

// Tip returns the goalposts of target at its current pin.
func Tip(ctx context.Context, r *repo.Repo, target string) (*Goalposts, error) {
	base, err := ProtectedBase(ctx, r)
	if err != nil {
		return nil, err
	}
	at := git.Short(base.Commit) + ":" + FileName
	t, err := base.Target(target)
	if errs.Is(err, errs.NotFound) {
		return nil, &UndefinedTargetError{Target: target, At: at, Base: base.Ref, Known: base.Config.TargetNames()}
	}
	if err != nil {
		return nil, err
	}
	ws := &Workspace{Repo: r, ConfigPath: at, Config: base.Config}
	if err := ws.checkReadOnly(); err != nil {
		return nil, err
	}
	ref, current, err := ResolvePinRef(ctx, r, t.Pin)
	if errors.Is(err, repo.ErrNoCommit) {
		return nil, base.Config.Errorf([]string{"targets", t.Name, "pin"}, "%q names no branch, tag or commit; set it to one that exists", t.Pin)
	}
	if err != nil {
		return nil, err
	}
	if err := base.Config.CheckTree(r, t, current); err != nil {
		return nil, err
	}
	blob, err := ConfigBlob(r, current)
	if err != nil {
		return nil, err
	}
	return &Goalposts{Committed: base.Committed, Target: t, Pin: current, Current: current, PinRef: ref, PinBlob: blob, Base: base.Refs, BaseRef: base.Ref}, nil
}

// accept makes pin the goalposts' pin when the tip accepts it.
func (g *Goalposts) accept(ctx context.Context, r *repo.Repo, pin string) error {
	if pin == g.Current {
		return nil
	}
	stale := &StalePinError{Target: g.Target.Name, Pin: pin, Current: g.Current, PinRef: g.PinRef}
	was, err := firstParentOf(ctx, r, g.Current, pin)
	if err != nil {
		return err
	}
	if !was {
		return stale
	}
	blob, err := ConfigBlob(r, pin)
	if err != nil {
		return err
	}
	if blob != g.PinBlob {
		stale.Differs = append(stale.Differs, FileName)
	}
	paths, err := protectedDiff(r, g.Target, g.Current, pin)
	if err != nil {
		return err
	}
	if stale.Differs = append(stale.Differs, paths...); len(stale.Differs) > 0 {
		return stale
	}
	if stale.CodeMoved, err = codeMoved(r, g.Target, g.Current, pin); err != nil || stale.CodeMoved {
		if err != nil {
			return err
		}
		return stale
	}
	g.Pin, g.PinBlob = pin, blob
	return nil
}

// firstParentOf reports whether commit is on the first-parent history of
// tip: the commits a branch pin has named, one after the other. A commit
// merged in from a side branch never was the pin.
func firstParentOf(ctx context.Context, r *repo.Repo, tip, commit string) (bool, error) {
	st := r.Store("")
	c, err := st.ReadCommit(repo.NewHash(tip))
	if err != nil {
		return false, errs.Wrap(errs.Failure, err, "cannot read the current pin %s", git.Short(tip))
	}
	for {
		if c.Hash.String() == commit {
			return true, nil
		}
		if len(c.Parents) == 0 {
			return false, nil
		}
		if err := ctx.Err(); err != nil {
			return false, errs.Wrap(errs.Failure, err, "checking the pin %s interrupted", git.Short(commit))
		}
		if c, err = st.ReadCommit(c.Parents[0]); err != nil {
			return false, errs.Wrap(errs.Failure, err, "cannot read the history of the current pin %s", git.Short(tip))
		}
	}
}

// GoalpostsAt is Judge for a workspace, with a warning when the working
// tree's hone.toml differs from the tip's: its edits change nothing.
func (w *Workspace) GoalpostsAt(ctx context.Context, name, pin string) (*Goalposts, error) {
	g, err := Judge(ctx, w.Repo, name, pin)
	var undefined *UndefinedTargetError
	if errors.As(err, &undefined) {
		_, undefined.InWorkingTree = w.Config.Targets[name]
	}
	if err != nil {
		return nil, err
	}
	if drift := w.drift(g.Committed); drift != "" {
		g.Warnings = append(g.Warnings, errs.Warning{Code: "uncommitted_config", Message: drift})
	}
	return g, nil
}

// drift says how the working tree's hone.toml differs from c's, or "".
func (w *Workspace) drift(c *Committed) string {
	b, err := os.ReadFile(w.ConfigPath)
	if err != nil {
		return ""
	}
	if repo.ComputeHash(repo.BlobObject, b).String() == c.Blob {
		return ""
	}
	return fmt.Sprintf("%s differs from %s at the protected tip %s: hone judges patches by the maintainer's committed rules, so the working tree's edits (its pin too) change nothing",
		w.ConfigPath, FileName, git.Short(c.Commit))
}

// Proposing returns the goalposts of a new proposal of target from this
// workspace. The working tree's hone.toml may ask for a pin (its target's
// pin), which the tip must accept like any other; a working tree that does
// not define the target asks for the current pin.
func (w *Workspace) Proposing(ctx context.Context, target string) (*Goalposts, error) {
	t, err := w.Target(target)
	if errs.Is(err, errs.NotFound) {
		tip, err := Tip(ctx, w.Repo, target)
		if err != nil {
			return nil, err
		}
		return w.GoalpostsAt(ctx, target, tip.Current)
	}
	if err != nil {
		return nil, err
	}
	pin, err := w.ResolvePin(ctx, t)
	if err != nil {
		return nil, err
	}
	return w.GoalpostsAt(ctx, target, pin)
}

// UndefinedTargetError refuses a target the protected tip's hone.toml does
// not define (errs.NotFound). Whether the working tree's defines it decides
// what to do: commit it, or name a target that exists.
type UndefinedTargetError struct {
	Target, At, Base string
	Known            []string // the tip's targets
	// InWorkingTree: the working tree's hone.toml defines the target.
	InWorkingTree bool
}

func (e *UndefinedTargetError) Error() string {
	known := "it defines none"
	if len(e.Known) > 0 {
		known = "its targets: " + strings.Join(e.Known, ", ")
	}
	if e.InWorkingTree {
		return fmt.Sprintf("target %q is not defined in %s at the protected tip (%s; %s); patches are judged by the maintainer's rules there: commit the target on %s", errs.Clip(e.Target), FileName, e.At, known, e.Base)
	}
	return fmt.Sprintf("unknown target %q: neither the working tree's %s nor the one at the protected tip (%s) defines it (%s); see `hone targets`", errs.Clip(e.Target), FileName, e.At, known)
}

// Unwrap makes the refusal a NotFound error for errs.CodeOf.
func (e *UndefinedTargetError) Unwrap() error {
	return &errs.Error{Code: errs.NotFound, Msg: e.Error()}
}
