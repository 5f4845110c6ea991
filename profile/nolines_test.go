package profile

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/tier"
)

// A profile whose hotspots name no source line says why: the build has no
// debug information. One line anywhere is enough to need no hint.
func TestProfileWithoutLinesSaysToBuildWithDebugInfo(t *testing.T) {
	if w := noLines([]Hotspot{{Symbol: "walk"}, {Symbol: "main"}}); w == nil || w.Code != "no_debug_info" {
		t.Errorf("hotspots without file:line: %+v; want the no_debug_info hint", w)
	}
	if w := noLines([]Hotspot{{Symbol: "walk"}, {Symbol: "main", File: "prog.c", Line: 9}}); w != nil {
		t.Errorf("a hotspot with a line: %+v; want no hint", w)
	}
	if w := noLines(nil); w != nil {
		t.Errorf("no hotspots: %+v; want no hint", w)
	}
}

// A real -O2 build without -g: perf finds the functions but no lines, and
// the profile says what to add.
func TestProfileOfABuildWithoutDebugInfoHintsAtDashG(t *testing.T) {
	tier.Jail(t)
	tier.Need(t, "perf", "cc")
	ws := newWorkspace(t, `
[targets.c]
build = "cc -O2 -o $HONE_OUT/w w.c"

  [targets.c.bench]
  run = "$HONE_OUT/w 200000000"
`, map[string]string{"targets/c/w.c": readTestdata(t, "twofuncs.c")})
	var warned []errs.Warning
	e, err := Run(context.Background(), ws, "c", Options{Warnings: func(w errs.Warning) { warned = append(warned, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Hotspots) == 0 || e.Hotspots[0].File != "" {
		t.Fatalf("hotspots %+v; want symbols without lines", e.Hotspots)
	}
	for _, w := range warned {
		if w.Code == "no_debug_info" && strings.Contains(w.Message, "-g") {
			return
		}
	}
	t.Errorf("warnings %+v; want no_debug_info naming -g", warned)
}
