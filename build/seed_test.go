package build

import (
	"slices"
	"testing"

	"github.com/hone-perf/hone/internal/jail"
)

// A command gets the seed where it asks for it, and in its environment;
// the spec it came from is left as it was.
func TestWithSeedFillsCommandAndEnvironment(t *testing.T) {
	t.Parallel()
	spec := jail.Spec{Command: "prog --seed {seed} --again {seed}", Env: []string{"A=1"}}
	got := WithSeed(spec, 77)
	if got.Command != "prog --seed 77 --again 77" || !slices.Equal(got.Env, []string{"A=1", "HONE_SEED=77"}) {
		t.Errorf("seeded spec %q %v", got.Command, got.Env)
	}
	if spec.Command != "prog --seed {seed} --again {seed}" || len(spec.Env) != 1 {
		t.Errorf("the original changed: %q %v", spec.Command, spec.Env)
	}
}

func TestNewSeedsAreFreshAndFitAnInt(t *testing.T) {
	t.Parallel()
	seen := map[int64]bool{}
	for range 100 {
		s, err := NewSeed()
		if err != nil || s < 1 || s > MaxSeed {
			t.Fatalf("seed %d, %v", s, err)
		}
		seen[s] = true
	}
	if len(seen) < 99 {
		t.Errorf("%d distinct seeds in 100 draws", len(seen))
	}
}
