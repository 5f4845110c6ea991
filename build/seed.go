package build

import (
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
)

// SeedVar is the environment variable that carries the input seed.
const SeedVar = "HONE_SEED"

// SeedPlaceholder is replaced by the input seed in gate, bench and profile
// commands.
const SeedPlaceholder = "{seed}"

// MaxSeed bounds input seeds: below 2^31, so that a program may read one
// with atoi, and still far too many inputs to carry answers for.
const MaxSeed = 1<<31 - 1

// NewSeed draws an input seed in [1, MaxSeed] from the kernel's random
// source: nothing a patch could know when it was written.
func NewSeed() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, errs.Wrap(errs.Failure, err, "cannot draw an input seed")
	}
	return int64(binary.LittleEndian.Uint64(b[:])%MaxSeed) + 1, nil
}

// WithSeed gives a gate, bench run or profile workload its input seed:
// {seed} in the command, HONE_SEED in the environment. Never a build: a
// build that knew the seed could bake the answers for it into the binary.
func WithSeed(spec jail.Spec, seed int64) jail.Spec {
	s := strconv.FormatInt(seed, 10)
	spec.Command = strings.ReplaceAll(spec.Command, SeedPlaceholder, s)
	spec.Env = append(append([]string{}, spec.Env...), SeedVar+"="+s)
	return spec
}
