package workspace

import (
	"strings"

	"github.com/hone-perf/hone/sanitize"
)

var gateNameRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// reservedGates name the rows a verdict adds for the build and the bench:
// `hone verdict show ID --gate build` shows the build's logs.
var reservedGates = map[string]bool{"build": true, "bench": true}

// validateGates fills the gates' defaults and checks each: a name that can
// be typed after --gate and stored as a file name, a command, a known
// combination of sanitizers, and a differential gate's generator and seed
// count.
func (p *parser) validateGates(at keyPath, gates []Gate) error {
	seen := map[string]bool{}
	for i := range gates {
		g := &gates[i]
		switch {
		case g.Name == "":
			return p.itemErrf(at, i, "gate %d has no name", i+1)
		case !gateNameRE().MatchString(g.Name) || len(g.Name) > 64:
			return p.itemErrf(at, i, "gate name %.70q may only use letters, digits, '_', '.' and '-' (at most 64, starting with a letter or digit)", g.Name)
		case reservedGates[g.Name]:
			return p.itemErrf(at, i, "gate name %q is the verdict's own row for the %s; choose another", g.Name, g.Name)
		case seen[g.Name]:
			return p.itemErrf(at, i, "gate name %q is used twice", g.Name)
		}
		seen[g.Name] = true
		if strings.TrimSpace(g.Run) == "" {
			return p.itemErrf(at, i, "gate %q has no run command", g.Name)
		}
		if g.Timeout.Duration == 0 {
			g.Timeout.Duration = DefaultGateTimeout
		}
		if g.Sanitize != nil {
			if err := sanitize.Check(g.Sanitize); err != nil {
				return p.itemErrf(at, i, "gate %q: sanitize: %v", g.Name, err)
			}
		}
		if err := p.differential(at, i, g); err != nil {
			return err
		}
	}
	return nil
}

// maxSeeds bounds a differential gate: every seed is a run on each side.
const maxSeeds = 1_000_000

func (p *parser) differential(at keyPath, i int, g *Gate) error {
	if g.Generate == "" {
		if g.Seeds != 0 {
			return p.itemErrf(at, i, "gate %q sets seeds but no generate command; add generate = \"a command that prints one input made from $HONE_SEED\"", g.Name)
		}
		return nil
	}
	if strings.TrimSpace(g.Generate) == "" {
		return p.itemErrf(at, i, "gate %q: generate is blank", g.Name)
	}
	switch {
	case g.Seeds == 0:
		g.Seeds = DefaultSeeds
	case g.Seeds < 0 || g.Seeds > maxSeeds:
		return p.itemErrf(at, i, "gate %q: seeds must be between 1 and %d, not %d", g.Name, maxSeeds, g.Seeds)
	}
	return nil
}

// minGateLog is the smallest [ledger] gate_log_size: the head and the tail
// of a stream cut to fit must both have room.
const minGateLog = 64 << 10
