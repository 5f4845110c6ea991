package attack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/e2e/testbed"
	"github.com/hone-perf/hone/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// arena is the shared testbed, with this suite's own helpers beside it.
type arena struct{ *testbed.Arena }

// newArena is testbed.New's workspace with one code layout a side: what
// these attacks go for (the host, the repository, hone's state, the
// network, answers kept between runs) does not depend on where the code
// lands (e2e/layout attacks the layouts), and each layout is a build per
// side and a warm-up pair in every verdict that reaches the bench. With
// one layout every bench run of a side shares one build, which only helps
// an attack that keeps its answer beside the program.
func newArena(t *testing.T, uid int) *arena {
	return &arena{testbed.Open(t, uid, "attack", func(a *testbed.Arena) map[string]string {
		toml := strings.ReplaceAll(testbed.AttackFile(t, "hone.toml"), "@RODIR@", a.RO)
		if !strings.HasPrefix(toml, "[bench]\n") {
			t.Fatalf("the attack fixture's hone.toml no longer starts with [bench]:\n%s", toml)
		}
		toml = "[bench]\n# One layout: this suite's subject is not the code layout.\nlayouts = 1\n" + strings.TrimPrefix(toml, "[bench]\n")
		return map[string]string{
			"hone.toml":                    toml,
			"targets/c/prog.c":             testbed.AttackFile(t, "prog.c"),
			"targets/c/Makefile":           testbed.AttackFile(t, "Makefile"),
			"targets/c/test.sh":            testbed.AttackFile(t, "test.sh"),
			"targets/c/testdata/golden.sh": testbed.AttackFile(t, "golden.sh"),
			"targets/c/testdata/expected":  expected(t, a.Tmp),
		}
	})}
}

// expected is the pin's output, which the golden gate compares against
// (testbed.New's own, made in tmp).
func expected(t *testing.T, tmp string) string {
	t.Helper()
	exe, src := filepath.Join(tmp, "prog-expected"), filepath.Join(tmp, "prog.c")
	defer os.Remove(exe)
	defer os.Remove(src)
	if err := os.WriteFile(src, []byte(testbed.AttackFile(t, "prog.c")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-O2", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v %s", err, out)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
