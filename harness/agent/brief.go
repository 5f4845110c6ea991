package agent

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hone-perf/hone/harness"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/mcp"
	"github.com/hone-perf/hone/playbooks"
	"github.com/hone-perf/hone/profile"
	"github.com/hone-perf/hone/workspace"
)

// briefHotspots is how many hotspots the first message lists.
const briefHotspots = 10

// Brief is the first message of a run: the target, its latest profile's top
// hotspots, the ledger so far, the playbook index, and the rules.
func Brief(ctx context.Context, ws *workspace.Workspace, target string) (string, error) {
	t, err := ws.Target(target)
	if err != nil {
		return "", err
	}
	pin, err := ws.ResolvePin(ctx, t)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are optimizing the target %q with hone. hone applies patches only inside the target's allowlist, runs its gates and an interleaved benchmark itself, and records every attempt in git. Your tools: %s.\n\n", target, strings.Join(mcp.ToolNames, ", "))
	fmt.Fprintf(&b, "Target: %s, directory %s/, pinned at %s (%s).", target, t.Path, t.Pin, git.Short(pin))
	if len(t.Protect) > 0 {
		fmt.Fprintf(&b, " Protected, never patchable: %s.", strings.Join(t.Protect, ", "))
	}
	b.WriteString("\n\n")

	if err := writeProfile(ctx, &b, ws, target); err != nil {
		return "", err
	}
	if err := writeLedger(ctx, &b, ws, target); err != nil {
		return "", err
	}
	pbs, err := playbooks.List(ws.Root)
	if err != nil {
		return "", err
	}
	b.WriteString("Playbook classes, cheapest first (read_playbook N for the procedure):\n")
	buildOpen := buildFilesOpen(ws.Root, t)
	for _, p := range pbs {
		fmt.Fprintf(&b, "  %d. %s: %s", p.Number, p.Name, p.Summary)
		if p.Number == buildClass && !buildOpen {
			b.WriteString(" [closed on this target: its build command is hone.toml's and no build file is patchable, so build flags cannot change]")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + rules)
	return b.String(), nil
}

const rules = `Rules:
1. Before each patch, state your hypothesis in words: which hotspot, which playbook class, and why the change should be faster.
2. Start where the profile points: the hotspot, and a class whose preconditions it meets; among those, the cheapest untried class first. A class marked closed cannot be tried on this target.
3. Never repeat an attempt that already has a verdict (same hotspot, class and hypothesis); read_ledger lists them, and hone refuses repeats.
4. Propose one patch per idea with propose_patch (a git-style unified diff against the pin), then judge it with run_verdict. The verdict is the only measure of success.
5. When nothing is left worth trying, end your reply with a line holding only ` + harness.DoneMarker + `.
`

// buildClass is the playbook class of build configuration.
const buildClass = 1

// buildFileNames are the files that configure a build, where a patch could
// change flags.
var buildFileNames = []string{"Makefile", "GNUmakefile", "makefile", "CMakeLists.txt", "meson.build", "Cargo.toml", "build.rs", ".cargo/config.toml", "configure.ac"}

// buildFilesOpen reports whether the target has a build file its
// allowlist lets a patch change. The build command itself lives in
// hone.toml, which no patch may touch.
func buildFilesOpen(root string, t *workspace.Target) bool {
	rules := t.Rules()
	for _, name := range buildFileNames {
		rel := path.Join(t.Path, name)
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err == nil && rules.Rule(rel) == "" {
			return true
		}
	}
	return false
}

func writeProfile(ctx context.Context, b *strings.Builder, ws *workspace.Workspace, target string) error {
	p, err := profile.Latest(ctx, ws, target)
	if errs.Is(err, errs.NotFound) {
		fmt.Fprintf(b, "No profile yet (`hone profile run %s` takes one); read the source to find the hot code.\n\n", target)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "Latest profile %s (%s, %d samples), top hotspots by exclusive share:\n", p.ID, p.Event, p.Samples)
	for i, h := range p.Top(briefHotspots).Hotspots {
		loc := ""
		if h.File != "" {
			loc = fmt.Sprintf("  %s:%d", h.File, h.Line)
		}
		fmt.Fprintf(b, "  %2d. %6.2f%% flat %6.2f%% cum  %s%s\n", i+1, h.FlatPct, h.CumPct, h.Label(), loc)
	}
	b.WriteString("\n")
	return nil
}

func writeLedger(ctx context.Context, b *strings.Builder, ws *workspace.Workspace, target string) error {
	attempts, err := ledger.Open(ws).Attempts(ctx, ledger.Filter{Target: target})
	if err != nil {
		return err
	}
	b.WriteString(LedgerSummary(attempts))
	b.WriteString("\n")
	return nil
}

// LedgerSummary is one line per earlier attempt with its latest verdict and
// who signed it; an untrusted verdict is said to be one.
func LedgerSummary(attempts []ledger.Attempt) string {
	if len(attempts) == 0 {
		return "Ledger: no earlier attempts on this target.\n"
	}
	var b strings.Builder
	judged := 0
	for _, a := range attempts {
		if len(a.Verdicts) > 0 {
			judged++
		}
	}
	fmt.Fprintf(&b, "Ledger: %d attempts, %d judged:\n", len(attempts), judged)
	for _, a := range attempts {
		outcome := "not judged yet"
		if v := a.Latest(); v != nil {
			outcome = v.Verdict
			if v.Summary != "" {
				outcome += " (" + v.Summary + ")"
			}
			if !v.Trusted {
				outcome += " [untrusted verdict: does not count]"
			}
		}
		fmt.Fprintf(&b, "  - patch %s, class %d, hotspot %s: %q -> %s\n", a.PatchID, a.Class, a.Hotspot, a.Hypothesis, outcome)
	}
	return b.String()
}

// FollowUp is the message of every turn after the first.
func FollowUp(ctx context.Context, ws *workspace.Workspace, target string, turn, turns int) (string, error) {
	attempts, err := ledger.Open(ws).Attempts(ctx, ledger.Filter{Target: target})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Turn %d of %d. %s\nContinue with the most promising untried idea for the profile's hotspots (the cheapest first among equals), stating its hypothesis first, or end your reply with a line holding only %s if nothing is left worth trying.",
		turn, turns, strings.TrimSuffix(LedgerSummary(attempts), "\n"), harness.DoneMarker), nil
}
