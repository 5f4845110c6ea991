package verdict

import (
	"crypto/rand"
	"encoding/binary"
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

// withSetup gives a gate or bench run its setup's seed and padding.
func withSetup(spec jail.Spec, s PairSetup) jail.Spec {
	spec = build.WithSeed(spec, s.Seed)
	spec.Env = append(spec.Env, EnvPadVar+"="+strings.Repeat("x", s.EnvPad))
	return spec
}
