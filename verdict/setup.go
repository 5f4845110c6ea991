package verdict

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"strings"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
)

// PairSetup is what the two runs of one bench pair share and no other run
// sees: the input seed ({seed}, HONE_SEED), the size of the environment's
// padding, and the build each side runs. A gate run gets one too (its
// baseline and candidate runs share it). Every setup is drawn afresh and
// recorded, so a verdict can be replayed, and nothing a run learns about
// its input (in a file, the page cache, the kernel) is worth anything to
// another run.
type PairSetup struct {
	Seed int64 `toml:"seed" json:"seed"`
	// EnvPad is how many bytes HONE_PAD holds: the environment's size
	// moves the stack, and with it where a program's data falls in the
	// cache; drawing it per pair, the same on both sides, spreads that
	// bias over the pairs instead of fixing it for the whole verdict.
	EnvPad int `toml:"env_pad" json:"env_pad"`
	// Layout is the index of the build each side runs, when a side has
	// several (seeded code layouts); 0 while it has one.
	Layout int `toml:"layout,omitempty" json:"layout,omitempty"`
}

// MaxEnvPad bounds EnvPad: a page's worth covers every stack alignment.
const MaxEnvPad = 4096

// EnvPadVar is the environment variable that pads a run's environment.
const EnvPadVar = "HONE_PAD"

// NewPairSetup draws a setup from the kernel's random source: a fresh
// input seed, a padding in [0, MaxEnvPad), and a layout in [0, layouts)
// (0 when layouts is below 2).
func NewPairSetup(layouts int) (PairSetup, error) {
	seed, err := build.NewSeed()
	if err != nil {
		return PairSetup{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return PairSetup{}, errs.Wrap(errs.Failure, err, "cannot draw a bench pair's setup")
	}
	s := PairSetup{Seed: seed, EnvPad: int(binary.LittleEndian.Uint64(b[:8]) % MaxEnvPad)}
	if layouts > 1 {
		s.Layout = int(binary.LittleEndian.Uint64(b[8:]) % uint64(layouts))
	}
	return s, nil
}

// padVar is the longest HONE_PAD setting, which every run's is a prefix of:
// one string for all runs, none made per run.
var padVar = EnvPadVar + "=" + strings.Repeat("x", MaxEnvPad)

// withSetup gives a gate or bench run its setup's seed and padding.
func withSetup(spec jail.Spec, s PairSetup) jail.Spec {
	spec = build.WithSeed(spec, s.Seed)
	spec.Env = append(spec.Env, padVar[:len(EnvPadVar)+1+min(max(s.EnvPad, 0), MaxEnvPad)])
	return spec
}

// setupReplay hands a verdict that runs again after an error the setups
// the error verdict drew: each gate's by name, the bench pair's on which
// the baseline failed (first, to whichever pair the bench draws first),
// and, of a verdict that kept its bench, the warm-up and measured pairs'
// in order. The run then measures the same inputs under the same
// paddings and layouts, so what went wrong can happen again, and what
// the error verdict never reached is drawn afresh. A nil setupReplay
// hands out nothing.
type setupReplay struct {
	gates          map[string]PairSetup
	failed         *PairSetup
	warmups, pairs []PairSetup
}

// replayOf is the setups e drew, for running it again.
func replayOf(e *Entry) *setupReplay {
	r := &setupReplay{gates: map[string]PairSetup{}}
	for _, g := range e.Gates {
		switch {
		case g.Setup == nil:
		case g.Name == benchGate:
			s := *g.Setup
			r.failed = &s
		default:
			r.gates[g.Name] = *g.Setup
		}
	}
	if b := e.Bench; b != nil {
		r.warmups, r.pairs = slices.Clone(b.Warmups), slices.Clone(b.Setups)
	}
	return r
}

// gate is the setup gate name had, if it ran.
func (r *setupReplay) gate(name string) (PairSetup, bool) {
	if r == nil {
		return PairSetup{}, false
	}
	s, ok := r.gates[name]
	return s, ok
}

// bench is the next warm-up's setup (warm) or the next measured pair's,
// while there are any.
func (r *setupReplay) bench(warm bool) (PairSetup, bool) {
	if r == nil {
		return PairSetup{}, false
	}
	if f := r.failed; f != nil {
		r.failed = nil
		return *f, true
	}
	q := &r.pairs
	if warm {
		q = &r.warmups
	}
	if len(*q) == 0 {
		return PairSetup{}, false
	}
	s := (*q)[0]
	*q = (*q)[1:]
	return s, true
}
