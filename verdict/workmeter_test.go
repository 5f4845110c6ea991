//go:build hone_testmeter

package verdict

import (
	"testing"

	"github.com/hone-perf/hone/internal/jail"
)

// The work meter charges a run for every process that declared work, and
// nothing for lines that are not a positive count.
func TestDeclaredWorkSumsEveryProcesssLines(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   float64
	}{
		{"", 0},
		{"hone-work: 12\n", 12},
		{"warming up\nhone-work: 12\nhone-work:3\n", 15},
		{"  hone-work: 7  \nhone-work: -5\nhone-work: lots\nhone-work 9\n", 7},
	} {
		o := jail.OutputOf([]byte(tc.stderr))
		if got := declaredWork(&o); got != tc.want {
			t.Errorf("declaredWork(%q) = %g, want %g", tc.stderr, got, tc.want)
		}
	}
}
