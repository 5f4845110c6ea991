package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/hone-perf/hone/internal/tier"
)

// measureScripts are the scripts whose subject includes measurement, each
// with the tools it needs and why chance fails it less than once in a
// thousand runs. They run one at a time with the real meter: two timed
// sessions side by side would each be the other's noise.
var measureScripts = []struct {
	name   string
	tools  []string
	chance string
}{
	{"demo_session", []string{"cc", "perf"}, demoChance},
	{"demo_temporary", []string{"cc", "perf"}, demoChance},
	{"verdict_harness", []string{"go"}, "either answer of the bench passes (faster, which an unseeded harness sends to needs-human-review, " +
		"or rejected-bench inconclusive): with layouts = 1 no layout can make a third, so what remains is the harness's own check that a loop's cost scales from N to 2N " +
		"by at least 1.7x, which at runs of up to 250 ms on an idle machine (a fixed cost of a few ms, under 2% of a run) sits at 2.0 " +
		"with a few percent of noise, some ten times its spread from the limit"},
}

// demoChance is the demo's: a hash table for a linear search is about 7x
// (its CI far above the 1.02 threshold after the first batch), and the
// length check is slower, so it is rejected-bench unless measured faster:
// the sequential test's false accept is at most 2.5% for no change, and
// for a real slowdown of tens of percent each of its pairs would have to
// come out the wrong way, far below one in a thousand.
const demoChance = "the fix is about 7x against a 1.02 threshold, so missing it needs most pairs off by sixfold; " +
	"the slower patch is rejected-bench unless measured faster, which the signed-rank sequential test (at most 2.5% false accepts at no change) " +
	"allows far less than once in a thousand runs for a real slowdown of tens of percent"

// TestMeasureScripts runs testdata/measure/*.txtar, the scripts whose
// subject includes measurement, with the real meter: the measurement tier.
func TestMeasureScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/measure/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(measureScripts) {
		t.Fatalf("testdata/measure holds %d scripts and measureScripts names %d: each says why chance fails it less than once in a thousand runs", len(files), len(measureScripts))
	}
	for _, ms := range measureScripts {
		t.Run(ms.name, func(t *testing.T) {
			tier.Measure(t, ms.chance)
			for _, tool := range ms.tools {
				if _, err := exec.LookPath(tool); err != nil {
					t.Fatalf("%s needs %s: %v", ms.name, strings.Join(ms.tools, " and "), err)
				}
			}
			p := scriptParams(t, map[string]string{tier.Env: "measure"})
			p.Files = []string{filepath.Join("testdata/measure", ms.name+".txtar")}
			testscript.Run(t, p)
		})
	}
}
