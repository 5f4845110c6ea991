package patch

import (
	"strings"
	"testing"

	"github.com/hone-perf/hone/allowlist"
	"github.com/hone-perf/hone/internal/errs"
)

func fileDiff(name, old, new string) string {
	return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n@@ -1 +1 @@\n-" + old + "\n+" + new + "\n"
}

// An upstream optimisation that comes with a test of its own is refused
// whole, and the refusal says how to propose the part inside the
// allowlist; a diff that is all outside it gets no such hint.
func TestRefusalOfAProtectedFileSaysHowToProposeTheRest(t *testing.T) {
	t.Parallel()
	a := allowlist.Rules{Root: "targets/t", Protect: []string{"**/*_test.go"}}
	both := fileDiff("targets/t/hash.go", "slow", "fast") + fileDiff("targets/t/hash_test.go", "old", "new")
	_, err := frontCheck([]byte(both), a, 0)
	if !errs.Is(err, errs.Policy) || !strings.Contains(err.Error(), `refused "targets/t/hash_test.go": protected by pattern`) ||
		!strings.Contains(err.Error(), "the rest of the diff (targets/t/hash.go) is inside the allowlist") ||
		!strings.Contains(err.Error(), "git diff -- . ':(exclude)targets/t/hash_test.go'") {
		t.Errorf("a fix with its test: %v; want the refusal and how to propose the fix alone", err)
	}
	_, err = frontCheck([]byte(fileDiff("targets/t/hash_test.go", "old", "new")), a, 0)
	if !errs.Is(err, errs.Policy) || strings.Contains(err.Error(), "propose it alone") {
		t.Errorf("a test alone: %v; want the refusal without a hint", err)
	}
}
