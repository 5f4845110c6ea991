package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// inPlaceFiles is a C project that builds where its sources are, as many
// do: the top Makefile makes programs/, whose Makefile compiles with
// make's own CC (cc) and the project's optimisation flags, links the
// objects with $(CC), and the top one copies the program up. Nothing is
// written to $HONE_OUT.
var inPlaceFiles = map[string]string{
	"targets/t/Makefile": ".PHONY: default\ndefault:\n\t@$(MAKE) -C programs\n\t@cp programs/prog .\n",
	"targets/t/programs/Makefile": "CFLAGS ?= -O3\nCFLAGS += $(MOREFLAGS)\nFLAGS = $(CFLAGS) $(CPPFLAGS) $(LDFLAGS)\n" +
		"prog: main.o ../hot.o\n\t$(CC) $(FLAGS) $^ -o $@\n",
	"targets/t/hot.c":           layoutFiles["targets/t/hot.c"],
	"targets/t/programs/main.c": layoutFiles["targets/t/main.c"],
}

// inPlaceFixture is inPlaceFiles built by build.
func inPlaceFixture(t *testing.T, build string) *fixture {
	return newFixture(t, inPlaceFiles, "[targets.t]\nbuild = \""+strings.ReplaceAll(build, `"`, `\"`)+"\"\n")
}

// A program built and linked in the checkout is laid out as one in
// $HONE_OUT is: each layout moves it (and the copy the build made of it)
// by its pad, from one build relinked.
func TestLayoutsOfABuildInPlaceMoveItsPrograms(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := inPlaceFixture(t, "make")
	r := f.start(false)
	ls, _, err := r.LayoutsFor(f.pin, 7, 4)
	if err != nil {
		t.Fatal(err)
	}
	plain := f.build(r, Baseline, f.pin)
	if !plain.OK() {
		t.Fatalf("the plain build: %s", plain.Describe())
	}
	prog := filepath.Join("targets", "t", "prog")
	at := symbols(t, filepath.Join(plain.Src, prog), "main")["main"]
	sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]bool{plain.OutputsDigest(): true}
	for i, s := range sides {
		l := ls[i+1]
		if !s.OK() || s.Unmoved != "" || s.Relinked != (i > 0) {
			t.Fatalf("layout %d: %s, unmoved %q, relinked %v", l.Index, s.Describe(), s.Unmoved, s.Relinked)
		}
		for _, p := range []string{prog, filepath.Join("targets", "t", "programs", "prog")} {
			if moved := symbols(t, filepath.Join(s.Src, p), "main")["main"]; moved-at != uint64(l.Pad) {
				t.Errorf("layout %d (pad %d): main of %s moved from %#x to %#x", l.Index, l.Pad, p, at, moved)
			}
		}
		digests[s.OutputsDigest()] = true
	}
	if len(digests) != len(ls) {
		t.Errorf("%d distinct sets of programs from %d layouts", len(digests), len(ls))
	}
}

// A build that links past the layout shim is built in one layout only,
// not in every one, and says which command linked and what it lacked, from
// its own log; a verdict after it reads that from the cache, building
// nothing.
func TestALayoutBuildThatLinksPastTheShimSaysWhyAfterOneBuild(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	if _, err := os.Stat("/usr/bin/cc"); err != nil {
		t.Skip("no /usr/bin/cc")
	}
	for _, c := range []struct{ name, build, want string }{
		{"compiler by path", "make CC=/usr/bin/cc", "`/usr/bin/cc -O3 main.o ../hot.o -o prog` names its compiler by path"},
		{"compiler the shim does not wrap", "mkdir -p $HONE_OUT/bin && ln -s /usr/bin/cc $HONE_OUT/bin/t-gcc && PATH=$HONE_OUT/bin:$PATH make CC=t-gcc",
			"`t-gcc -O3 main.o ../hot.o -o prog` links with t-gcc, which the layout shim does not wrap"},
		{"a PATH of its own", "PATH=/usr/bin:/bin make", "`cc -O3 main.o ../hot.o -o prog` does not reach the layout shim"},
		{"a silent build", "make -s CC=/usr/bin/cc", "the build's log shows no link command"},
		{"no program", "make && rm prog programs/prog", "leaves no linked program"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := inPlaceFixture(t, c.build)
			r := f.start(false)
			ls, _, err := r.LayoutsFor(f.pin, 7, 4)
			if err != nil {
				t.Fatal(err)
			}
			plain := f.build(r, Baseline, f.pin)
			sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range sides {
				if s != sides[0] || !s.OK() || s.Cached {
					t.Errorf("layout %d: not the one build of the first (%s, cached %v)", i+1, s.Describe(), s.Cached)
				}
			}
			if !strings.Contains(sides[0].Unmoved, c.want) {
				t.Errorf("why the layouts did not move: %q, want %q", sides[0].Unmoved, c.want)
			}
			r2 := f.start(false)
			again, err := r2.BuildLayouts(context.Background(), Baseline, f.pin, f.build(r2, Baseline, f.pin), ls[1:])
			if err != nil {
				t.Fatal(err)
			}
			if s := again[0]; !s.Cached || s.Unmoved != sides[0].Unmoved || again[1] != s || again[2] != s {
				t.Errorf("the next verdict's layouts: cached %v, unmoved %q", s.Cached, s.Unmoved)
			}
		})
	}
}

// A Go build that passes -ldflags of its own replaces the function order
// GOFLAGS gives its linker: its layouts do not move, and say so.
func TestAGoBuildWithLdflagsOfItsOwnSaysWhyItIsOneLayout(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, goFiles(t), "[targets.t]\nbuild = \"go build -ldflags=-s -o $HONE_OUT/prog .\"\n")
	f.warmGo()
	r := f.start(false)
	ls, _, err := r.LayoutsFor(f.pin, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	plain := f.build(r, Baseline, f.pin)
	sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	if s := sides[0]; !s.OK() || sides[1] != s || !strings.Contains(s.Unmoved, "passes -ldflags of its own") {
		t.Errorf("a Go build with -ldflags: %s, unmoved %q", s.Describe(), s.Unmoved)
	}
}
