package verdict

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

// Calibration builds the pin twice, in two checkouts, as a verdict builds
// baseline and candidate, runs its A/A, injected and layout-shift sessions
// on them, and records what they found. Calibration measures with the
// real meter in every tier, so what its sessions decide is the
// measurement tier's to assert (TestMeasureCalibrationAcceptsNoAAAndCatchesAFiftyPercentSlowdown);
// here they are counted and reported, and the machine's turn they take is
// a lock of the test's own, so that they wait for no other suite's bench.
func TestCalibrateComparesTwoBuildsOfThePin(t *testing.T) {
	t.Setenv(BenchLockEnv, filepath.Join(t.TempDir(), "bench.lock"))
	// Four layouts: the layout-shift sessions are part of the subject. One
	// look of five pairs a session: what the sessions decide is not.
	f := newFixture(t, "ctarget", "c", fourLayouts(cToml))
	var sessions int
	c, err := Calibrate(context.Background(), f.ws, "c", CalibrationOptions{Sessions: 1, Inject: []float64{0.5}, MaxPairs: 5, Progress: func(p Progress) {
		sessions = max(sessions, p.Session)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.AA.Sessions != 1 || len(c.Injected) != 1 || c.Injected[0].Sessions != 1 || sessions != 2 {
		t.Fatalf("A/A %+v, injected %+v, %d sessions seen", c.AA, c.Injected, sessions)
	}
	if l := c.LayoutShift; l == nil || l.Sessions != 1 || !regexp.MustCompile(`16-byte layout shift: [01]/1 accepted, [01]/1 slower`).MatchString(c.Summary) {
		t.Errorf("layout-shift sessions %+v, summary %q", l, c.Summary)
	}
	if b := c.Environment.BaselineBinary["prog"]; b == "" || c.Environment.CandidateBinary["prog"] != b {
		t.Errorf("two builds of the pin: %v vs %v", c.Environment.BaselineBinary, c.Environment.CandidateBinary)
	}
	if c.InputSeed == 0 || c.ID == "" || !regexp.MustCompile(`A/A: [01]/1 false accepts`).MatchString(c.Summary) {
		t.Errorf("entry %+v", c.Common)
	}
	var b strings.Builder
	if err := WriteCalibrationText(&b, c); err != nil || !regexp.MustCompile(`\+50% slowdown +1 `).MatchString(b.String()) || !regexp.MustCompile(`16-byte layout shift +1 `).MatchString(b.String()) {
		t.Errorf("text %q %v", b.String(), err)
	}
	// A verdict on this host now has a calibration on record.
	if w := calibrationWarning(context.Background(), f.ws, "c", c.Host); w != "" {
		t.Errorf("warning after calibrating: %q", w)
	}
	if s, err := ledger.Open(f.ws).Latest(context.Background(), "c", ledger.KindCalibration); err != nil || s.ID != c.ID {
		t.Errorf("latest calibration %v %v", s, err)
	}
}

func TestCalibrateRefusesBadInput(t *testing.T) {
	t.Parallel()
	f := newRepo(t, "ctarget", "c", cToml)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		target string
		opts   CalibrationOptions
		code   errs.Code
	}{
		{"unknown target", "nope", CalibrationOptions{}, errs.NotFound},
		{"an injection of 100%", "c", CalibrationOptions{Inject: []float64{1}}, errs.Usage},
		{"an unknown metric", "c", CalibrationOptions{Metric: "speed"}, errs.Usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Calibrate(ctx, f.ws, tc.target, tc.opts); !errs.Is(err, tc.code) {
				t.Errorf("err %v, want %v", err, tc.code)
			}
		})
	}
}

// The conclusion answers what a user asks: what this machine catches at
// its max_pairs, and for what it misses, how many pairs would catch it.
func TestCalibrationConcludesInOneLine(t *testing.T) {
	c := &CalibrationEntry{BatchSize: 10, MaxPairs: 30, Confidence: 0.95, AA: SessionStats{Sessions: 20, SD: 0.03},
		Injected: []SessionStats{
			{Inject: 0.05, Sessions: 20, Detected: 19},
			{Inject: 0.02, Sessions: 20, Detected: 12},
			{Inject: -0.02, Sessions: 20, Accepts: 1, MeanSpeedup: 1.02},
		}}
	need := c.pairsFor(0.02)
	got := c.conclusion()
	for _, want := range []string{
		"this machine detects 5% in 19 of 20 sessions at max_pairs 30",
		"2% (detected in 12 of 20 sessions) needs max_pairs " + strconv.Itoa(need) + " or the instructions tier",
		"accepts a speedup of 2% (measured 1.020x) in 1 of 20 sessions",
		"accepts A/A in 0 of 20",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("conclusion %q lacks %q", got, want)
		}
	}
	if need <= 30 || need%10 != 0 {
		t.Errorf("2%% at a pair noise of 3%% needs %d pairs", need)
	}
}
