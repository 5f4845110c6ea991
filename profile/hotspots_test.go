package profile

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// fakeStack is one sample of a synthetic profile.
type fakeStack struct {
	weight int64
	// locations from the leaf outwards; each is its frames innermost first,
	// as "fn:line" (an inlined chain ends with the physical function).
	locs [][]string
}

// synthetic builds a profile with "samples/count" and "cpu/nanoseconds"
// columns from stacks, every function in file f.c, every location in one
// mapping /bin/prog unless a frame names a kernel function ("k.name").
func synthetic(t *testing.T, stacks []fakeStack) *profile.Profile {
	t.Helper()
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		DefaultSampleType: "cpu",
	}
	user := &profile.Mapping{ID: 1, File: "/bin/prog"}
	kern := &profile.Mapping{ID: 2, File: "[kernel.kallsyms]"}
	p.Mapping = []*profile.Mapping{user, kern}
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, Filename: "f.c"}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, st := range stacks {
		s := &profile.Sample{Value: []int64{st.weight, st.weight * 1000}}
		for _, frames := range st.locs {
			l := &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: user}
			for _, fr := range frames {
				name, line, _ := strings.Cut(fr, ":")
				if strings.HasPrefix(name, "k.") {
					l.Mapping = kern
				}
				n, err := strconv.Atoi(line)
				if err != nil {
					t.Fatalf("frame %q: %v", fr, err)
				}
				l.Line = append(l.Line, profile.Line{Function: fn(name), Line: int64(n)})
			}
			p.Location = append(p.Location, l)
			s.Location = append(s.Location, l)
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHottestLineIsWhereTimeIsSpent reproduces what GCC emits for a helper
// split by partial inlining (cJSON's add_item_to_array): the helper inlined
// into its caller, and into itself at its own signature line. Every sample
// has both frames on the stack, so counting lines by inclusive time ties the
// signature with the loop; pprof -lines puts the time on the loop.
func TestHottestLineIsWhereTimeIsSpent(t *testing.T) {
	loop := []string{"push_back:31", "push_back:21", "append_value:42"}
	p := synthetic(t, []fakeStack{
		{weight: 90, locs: [][]string{loop, {"main:60"}}},
		{weight: 6, locs: [][]string{{"push_back:32", "push_back:21", "append_value:42"}, {"main:60"}}},
		{weight: 4, locs: [][]string{{"append_value:41"}, {"main:60"}}},
	})
	hs, _, err := Hotspots(p)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Hotspot{}
	for _, h := range hs {
		byName[h.Symbol] = h
	}
	for _, tc := range []struct {
		fn, why  string
		line     int
		linePct  float64
		inlined  string
		wantName string
	}{
		{"push_back", "its own time is on the loop, not the signature it was inlined at", 31, 90, "append_value", "push_back (inlined into append_value)"},
		{"append_value", "its own time, not the call that holds 96%", 41, 4, "", "append_value"},
		{"main", "no time of its own: the call its time passes through", 60, 100, "", "main"},
	} {
		h := byName[tc.fn]
		if h.Line != tc.line || h.LinePct != tc.linePct || h.InlinedInto != tc.inlined || h.Label() != tc.wantName {
			t.Errorf("%s: line %d (%.2f%%), inlined into %q, label %q; want line %d (%.2f%%), %q, %q: %s",
				tc.fn, h.Line, h.LinePct, h.InlinedInto, h.Label(), tc.line, tc.linePct, tc.inlined, tc.wantName, tc.why)
		}
	}
	if hs[0].Symbol != "push_back" || hs[0].FlatPct != 96 || hs[0].CumPct != 96 {
		t.Errorf("top hotspot %+v, want push_back at 96%% flat and cum", hs[0])
	}
}

// TestInlinedIntoNamesTheMainHost: a helper inlined into two functions is
// labelled with the one holding most of its time, and not at all when its
// own out-of-line copy holds most.
func TestInlinedIntoNamesTheMainHost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stacks []fakeStack
		want   string
	}{
		{"two hosts", []fakeStack{
			{weight: 60, locs: [][]string{{"same:50", "find_word:61"}}},
			{weight: 40, locs: [][]string{{"same:50", "add_word:30"}}},
		}, "find_word"},
		{"mostly out of line", []fakeStack{
			{weight: 30, locs: [][]string{{"same:50", "find_word:61"}}},
			{weight: 70, locs: [][]string{{"same:50"}, {"find_word:61"}}},
		}, ""},
		{"split across hosts, none a majority", []fakeStack{
			{weight: 40, locs: [][]string{{"same:50", "find_word:61"}}},
			{weight: 30, locs: [][]string{{"same:50", "add_word:30"}}},
			{weight: 30, locs: [][]string{{"same:50"}}},
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs, _, err := Hotspots(synthetic(t, tc.stacks))
			if err != nil {
				t.Fatal(err)
			}
			if got := hotspot(t, &Entry{Hotspots: hs}, "same").InlinedInto; got != tc.want {
				t.Errorf("same inlined into %q, want %q", got, tc.want)
			}
		})
	}
}
