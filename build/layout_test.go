package build

import (
	"context"
	"debug/elf"
	"path/filepath"
	"slices"
	"testing"
)

// A build that compiles and links in separate steps, the usual shape of
// a Makefile: only the link may get the padding.
const layoutTarget = `[targets.t]
build = "cc -O2 -c -o $HONE_OUT/hot.o hot.c && cc -O2 -c -o $HONE_OUT/main.o main.c && cc -o $HONE_OUT/prog $HONE_OUT/main.o $HONE_OUT/hot.o"
`

var layoutFiles = map[string]string{
	"targets/t/hot.c":  "int hot(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * i % 7; return s; }\n",
	"targets/t/main.c": "#include <stdio.h>\nint hot(int);\nint main(int c, char **v) { (void)v; printf(\"%d\\n\", hot(1000 + c)); return 0; }\n",
}

// symbols returns the addresses of the named functions in an ELF file.
func symbols(t *testing.T, path string, names ...string) map[string]uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, s := range syms {
		if slices.Contains(names, s.Name) {
			out[s.Name] = s.Value
		}
	}
	return out
}

// Each layout moves every function of the program by exactly its pad,
// main and the hot function alike, prints what the plain build prints,
// and is another binary; the gates' plain build is untouched.
func TestLayoutBuildsMoveTheProgramsCodeByTheirPad(t *testing.T) {
	f := newFixture(t, layoutFiles, layoutTarget)
	r := f.start(false)
	ok, why, err := r.LayoutsApply(f.pin)
	if err != nil || !ok {
		t.Fatalf("a C target cannot be laid out: %q, %v", why, err)
	}
	plain := f.build(r, Baseline, f.pin)
	want, _ := run(t, plain, "$HONE_OUT/prog")
	at := symbols(t, filepath.Join(plain.Out, "prog"), "main", "hot")
	digests := map[string]bool{plain.OutputsDigest(): true}
	for _, l := range Layouts(7, 4)[1:] {
		s, err := r.BuildLayout(context.Background(), Baseline, f.pin, l)
		if err != nil {
			t.Fatal(err)
		}
		if !s.OK() || s.Cached {
			t.Fatalf("layout %d: %s, cached %v", l.Index, s.Describe(), s.Cached)
		}
		if got, _ := run(t, s, "$HONE_OUT/prog"); got != want {
			t.Errorf("layout %d prints %q, the plain build %q", l.Index, got, want)
		}
		moved := symbols(t, filepath.Join(s.Out, "prog"), "main", "hot")
		for _, name := range []string{"main", "hot"} {
			if moved[name]-at[name] != uint64(l.Pad) {
				t.Errorf("layout %d (pad %d): %s moved from %#x to %#x", l.Index, l.Pad, name, at[name], moved[name])
			}
		}
		digests[s.OutputsDigest()] = true
	}
	if len(digests) != 4 {
		t.Errorf("%d distinct binaries from 4 layouts", len(digests))
	}
	again := f.build(f.start(false), Baseline, f.pin)
	if !again.Cached || again.OutputsDigest() != plain.OutputsDigest() {
		t.Errorf("the plain build after the layouts: cached %v, same binary %v", again.Cached, again.OutputsDigest() == plain.OutputsDigest())
	}
}

// A C++ program links through the c++ wrapper of the same shim.
func TestCXXLayoutBuildMovesTheProgramsCode(t *testing.T) {
	f := newFixture(t, map[string]string{"targets/t/prog.cc": "#include <cstdio>\nint main() { std::puts(\"hi\"); return 0; }\n"},
		"[targets.t]\nbuild = \"c++ -O2 -o $HONE_OUT/prog prog.cc\"\n")
	r := f.start(false)
	plain := f.build(r, Baseline, f.pin)
	l := Layouts(11, 2)[1]
	s, err := r.BuildLayout(context.Background(), Baseline, f.pin, l)
	if err != nil || !s.OK() {
		t.Fatalf("layout build: %v %v", err, s)
	}
	at, moved := symbols(t, filepath.Join(plain.Out, "prog"), "main"), symbols(t, filepath.Join(s.Out, "prog"), "main")
	if moved["main"]-at["main"] != uint64(l.Pad) {
		t.Errorf("pad %d: main moved from %#x to %#x", l.Pad, at["main"], moved["main"])
	}
}

// Four layouts put the code at each offset of a cache line once, whatever
// the seed; the seed alone decides them.
func TestLayoutsCoverEveryOffsetOfALine(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		ls := Layouts(seed, 4)
		var offsets []int
		for i, l := range ls {
			if l.Index != i || l.Pad < 0 || l.Pad >= layoutSpan+layoutLine || l.Pad%layoutStep != 0 {
				t.Fatalf("seed %d: layout %d is %+v", seed, i, l)
			}
			offsets = append(offsets, l.Pad%layoutLine)
		}
		slices.Sort(offsets)
		if !slices.Equal(offsets, []int{0, 16, 32, 48}) {
			t.Fatalf("seed %d: offsets %v", seed, offsets)
		}
		if !slices.Equal(ls, Layouts(seed, 4)) {
			t.Fatalf("seed %d: two draws differ", seed)
		}
	}
	if slices.Equal(Layouts(1, 4), Layouts(2, 4)) {
		t.Error("two seeds draw the same layouts")
	}
	if got := Layouts(3, 1); len(got) != 1 || got[0].Pad != 0 {
		t.Errorf("one layout is %v, not the plain build", got)
	}
}

// A Go target is one layout: its linker is not the C compiler's.
func TestGoTargetIsOneLayout(t *testing.T) {
	f := newFixture(t, goFiles(t), goTarget)
	ok, why, err := f.start(false).LayoutsApply(f.pin)
	if err != nil || ok || why == "" {
		t.Fatalf("a Go target: layouts apply %v (%q, %v)", ok, why, err)
	}
}
