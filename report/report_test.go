package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// sample is a small but complete report: every verdict word, a gate
// rejection without a speedup, a hostile hypothesis and one too long for
// the plot. The first three attempts are on the protected base's pin, the
// last two on an agent's own commit.
func sample() *Report {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	const main, own = "aaaabbbbccccddddeeeeffff0000111122223333", "9999888877776666555544443333222211110000"
	r := &Report{
		Pins: map[string]Pin{
			main: {Commit: main, Date: at.Add(-time.Hour), OnBase: true, BaseRefs: []string{"refs/heads/main"}},
			own:  {Commit: own, Date: at, BaseRefs: []string{"refs/heads/main"}},
		},
		Workspace: "/tmp/demo",
		Target:    "wordfreq",
		Generated: at,
		Threshold: 0.02,
		Attempts: []Attempt{
			{Target: "wordfreq", PatchID: "3f1c9a0d2b7e41aa", Created: at, Class: 5, Hotspot: "find_word",
				Hypothesis: "Replace the linear scan with a hash table", Verdict: "accepted",
				Summary: "accepted: cpu-time 14.2x faster", Metric: "cpu-time", Signer: "runner@ci", Trusted: true,
				HasSpeedup: true, Speedup: 14.2, Low: 12.9, High: 15.8, Confidence: 0.95,
				Benchmarks: []Benchmark{{Name: "BenchmarkFind/words=1k", Decides: true, Speedup: 14.2, Low: 12.9, High: 15.8},
					{Name: "BenchmarkCount", Speedup: 0.93, Low: 0.9, High: 0.96}}},
			{Target: "wordfreq", PatchID: "77aa01bb", Created: at, Class: 5, Hotspot: "find_word",
				Hypothesis: "Compare lengths before strcmp", Verdict: "rejected-bench",
				Summary: "regressed", Metric: "cpu-time",
				HasSpeedup: true, Speedup: 0.52, Low: 0.49, High: 0.55, Confidence: 0.95},
			{Target: "wordfreq", PatchID: "99cc", Created: at, Class: 3, Hotspot: "add_word",
				Hypothesis: "Pool the word copies", Verdict: "needs-human-review", Metric: "cpu-time",
				HasSpeedup: true, Speedup: 1.04, Low: 1.021, High: 1.06, Confidence: 0.95},
			{Target: "wordfreq", PatchID: "aa00", Created: at, Class: 1, Hotspot: "main",
				Hypothesis: `<script>alert("x")</script> & "quotes"`, Verdict: "rejected-gate",
				Summary: "gate golden: output differs"},
			{Target: "wordfreq", PatchID: "bb11", Created: at, Class: 4, Hotspot: "count_words",
				Hypothesis: "Read the file in one go"},
		},
		Profiles: []Profile{{
			Target: "wordfreq", ID: "profile-0123456789", Created: at, Event: "cpu-clock", Samples: 412,
			Hotspots: []Hotspot{
				{Symbol: "find_word", FlatPct: 71.4, CumPct: 96.1, File: "targets/wordfreq/wordfreq.c", Line: 52},
				{Symbol: "__strcmp_avx2", FlatPct: 24.7, CumPct: 24.7},
				{Symbol: "count_words", FlatPct: 2.1, CumPct: 98.5, File: "targets/wordfreq/wordfreq.c", Line: 66},
				{Symbol: "main", FlatPct: 0.2, CumPct: 99.9, File: "targets/wordfreq/wordfreq.c", Line: 110},
			},
		}},
	}
	for i := range r.Attempts {
		r.Attempts[i].Pin = main
		if i >= 3 {
			r.Attempts[i].Pin = own
		}
	}
	r.Attempts[1].Hypothesis = "Compare the lengths of both words before calling strcmp on them, which skips most calls"
	return r
}

func render(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestRenderShowsEveryPart(t *testing.T) {
	html := render(t, sample())
	for _, want := range []string{
		`<table id="attempts">`,
		"Replace the linear scan with a hash table",
		"14.2×", "[12.9×, 15.8×]",
		`<svg id="forest"`, "accept ≥ 1.02×",
		`class="hotspots"`, "find_word", "targets/wordfreq/wordfreq.c:52",
		"rejected-gate", "not judged yet: 1", "<td>runner@ci</td>",
		"95% CI, cpu-time, geometric mean", "BenchmarkFind/words=1k * 14.2× [12.9×, 15.8×]", "BenchmarkCount 0.93× [0.9×, 0.96×]",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The gate rejection and the unjudged attempt have no interval: four
	// attempts with speedups would mean a bogus row.
	if n := strings.Count(html, "<circle "); n != 3 {
		t.Errorf("forest plot has %d rows, want 3 (one per benchmarked attempt)", n)
	}
	if strings.Contains(html, "ZgotmplZ") {
		t.Error("html/template rejected a value (ZgotmplZ in the output)")
	}
}

func TestRenderEscapesLedgerText(t *testing.T) {
	html := render(t, sample())
	if strings.Contains(html, `<script>alert`) {
		t.Fatal("a hypothesis was written as markup")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &#34;quotes&#34;") {
		t.Error("the hostile hypothesis is not shown escaped")
	}
}

// The page must be readable offline and archived: nothing may be fetched.
func TestRenderIsSelfContained(t *testing.T) {
	html := render(t, sample())
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "https://"} {
		if strings.Contains(html, banned) {
			t.Errorf("report contains %q: it must not load anything", banned)
		}
	}
}

func TestRenderEmptyLedger(t *testing.T) {
	html := render(t, &Report{Workspace: "/w", Generated: time.Unix(0, 0), Threshold: 0.02})
	for _, want := range []string{"The ledger has no attempts yet", "No attempt has reached a benchmark yet", "No profile yet"} {
		if !strings.Contains(html, want) {
			t.Errorf("empty report lacks %q", want)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   []float64
	}{
		{"wide axis uses 1-2-5", 0.4, 20, []float64{0.5, 1, 2, 5, 10, 20}},
		{"narrow axis gets finer ticks", 0.8, 1.3, []float64{0.9, 1, 1.1, 1.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ticks(tc.lo, tc.hi)
			if len(got) != len(tc.want) {
				t.Fatalf("ticks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("ticks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
				}
			}
		})
	}
}

// Attempts are grouped by pin, each group saying when its pin was made and
// whether the protected base holds it; a label the plot cuts is whole on
// hover.
func TestRenderGroupsByPinAndKeepsFullLabels(t *testing.T) {
	html := render(t, sample())
	for _, want := range []string{
		`<tr class="pin-row"><th colspan="9">pin aaaabbbbcccc · 2026-11-29 11:00 UTC · on refs/heads/main</th></tr>`,
		`<tr class="pin-row off-base"><th colspan="9">pin 999988887777 · 2026-11-29 12:00 UTC · NOT reachable from the protected base (refs/heads/main)`,
		`<title>2. Compare the lengths of both words before calling strcmp on them, which skips most calls (pin aaaabbbbcccc)</title>2. Compare the lengths of both words be…</text>`,
		`<title>__strcmp_avx2</title>__strcmp_avx2</text>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(html, `<tbody class="pin">`); n != 2 {
		t.Errorf("%d pin groups, want 2", n)
	}
	// The numbers run over the whole table, as in the plot.
	if !strings.Contains(html, `<td class="num">4</td>`) || !strings.Contains(html, `<td class="num">5</td>`) {
		t.Error("the second group is not numbered 4 and 5")
	}
}
