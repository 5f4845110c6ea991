package guard

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Namespace is one kind of ref a server's pre-receive hook guards: who may
// write it and what every push there must pass.
type Namespace struct {
	Refs   string `json:"refs"`
	Writer string `json:"writer"`
	Checks string `json:"checks"`
}

// Namespaces says, for this policy, which refs the server's hook guards,
// who may write each and what it checks there.
func (p *Policy) Namespaces() []Namespace {
	c := p.base.Config
	maint := "nobody: no [guard] maintainers is set, so the forge's branch protection must cover it"
	if c.Guard.Maintainers != "" {
		maint = "anyone with push access, but a commit that changes " + workspace.FileName
		if c.Ledger.AllowedSigners != "" {
			maint += ", " + c.Ledger.AllowedSigners
		}
		maint += ", " + c.Guard.Maintainers + " or a protected path must be signed by a key " + c.Guard.Maintainers + " lists at the ref's old tip"
	}
	signed := "anyone"
	if c.Ledger.AllowedSigners != "" {
		signed = "anyone; verdict and started entries only in commits signed by a key " + c.Ledger.AllowedSigners + " lists at the protected base"
	}
	out := []Namespace{{Refs: strings.Join(p.BaseRefs(), ", "), Writer: maint, Checks: "never deleted; rules and keys are read from the protected base as it was before the push"}}
	for _, pat := range c.Guard.Refs {
		out = append(out, Namespace{Refs: pat, Writer: "agents", Checks: "every commit the protected base does not hold stays inside the target the ref names, against each parent"})
	}
	out = append(out,
		Namespace{Refs: "refs/heads/" + c.Ledger.Branch, Writer: signed, Checks: "appends only, on the first-parent history (the order of arrival runners queue by); only entries, their attachments (added with their entry) and the README; no path an inbox holds with other bytes; well-formed entries at their own paths; one proposal per patch id, at the target's pin, arriving with its patch ref"},
		Namespace{Refs: c.Ledger.NotesRef, Writer: "anyone", Checks: "appends only; every added line is the note line of a verdict entry of the ledger after the push"},
		Namespace{Refs: ledger.PatchRefPrefix + "<id>", Writer: "anyone, with its proposal", Checks: "created once, never moved or deleted; the one-parent commit its proposal names, on the proposal's pin, inside its target; no commit or tree another patch id holds"},
		Namespace{Refs: "refs/heads/*, refs/tags/* (new)", Writer: "anyone", Checks: "not a name spelled like a commit id, a branch named like a short pin, or a name another ref already answers to"},
	)
	return append(out, fleetNamespaces(p)...)
}

// InstallServerHook writes the pre-receive hook of the server repository
// the policy was read from, calling the hone binary at honePath. A
// pre-receive hook that is not hone's is never overwritten.
func InstallServerHook(ctx context.Context, p *Policy, honePath string) (HookAction, error) {
	if !filepath.IsAbs(honePath) {
		return HookAction{}, errs.Failuref("hooks must call hone by an absolute path, not %q", honePath)
	}
	dir, err := git.Output(ctx, p.Dir(), "rev-parse", "--git-path", "hooks")
	if err != nil {
		return HookAction{}, errs.Wrap(errs.Failure, err, "cannot find the hooks directory of %s", p.Dir())
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Dir(), dir)
	}
	path := filepath.Join(dir, "pre-receive")
	act := HookAction{Hook: "pre-receive", Path: path, Action: "installed", Hone: honePath}
	cur, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return act, errs.Wrap(errs.Failure, err, "cannot read %s", path)
	case !strings.Contains(string(cur), hookMarker):
		return act, errs.Policyf("refused: %s is not hone's; add `%s guard pre-receive` to it by hand (it reads the pushed refs on stdin)", path, honePath)
	default:
		act.Action = "updated"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return act, errs.Wrap(errs.Failure, err, "cannot create %s", dir)
	}
	text := fmt.Sprintf("#!/bin/sh\n%s installed by `hone hooks install --server`\nexec %s guard pre-receive\n", hookMarker, shQuote(honePath))
	return act, writeHook(path, text)
}
