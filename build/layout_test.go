package build

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
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
// and is another binary; the gates' plain build is untouched. One build
// serves all three layouts: the others are its links made again, the very
// binaries a build of their own gives.
func TestLayoutBuildsMoveTheProgramsCodeByTheirPad(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, layoutFiles, layoutTarget)
	r := f.start(false)
	ls, why, err := r.LayoutsFor(f.pin, 7, 4)
	if err != nil || len(ls) != 4 {
		t.Fatalf("a C target cannot be laid out: %q, %v", why, err)
	}
	plain := f.build(r, Baseline, f.pin)
	want, _ := run(t, plain, "$HONE_OUT/prog")
	at := symbols(t, filepath.Join(plain.Out, "prog"), "main", "hot")
	sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	digests := map[string]bool{plain.OutputsDigest(): true}
	for i, s := range sides {
		l := ls[i+1]
		if !s.OK() || s.Cached || s.Relinked != (i > 0) {
			t.Fatalf("layout %d: %s, cached %v, relinked %v", l.Index, s.Describe(), s.Cached, s.Relinked)
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
		own, err := f.start(false).BuildLayout(context.Background(), Candidate, f.pin, l)
		if err != nil || own.OutputsDigest() != s.OutputsDigest() {
			t.Errorf("layout %d: its own build (%v) differs from the relinked one", l.Index, err)
		}
	}
	if len(digests) != 4 {
		t.Errorf("%d distinct binaries from 4 layouts", len(digests))
	}
	r2 := f.start(false)
	again := f.build(r2, Baseline, f.pin)
	if !again.Cached || again.OutputsDigest() != plain.OutputsDigest() {
		t.Errorf("the plain build after the layouts: cached %v, same binary %v", again.Cached, again.OutputsDigest() == plain.OutputsDigest())
	}
	cached, err := r2.BuildLayouts(context.Background(), Baseline, f.pin, again, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range cached {
		if !s.Cached || s.OutputsDigest() != sides[i].OutputsDigest() {
			t.Errorf("the pin's layout %d again: cached %v, same binary %v", i+1, s.Cached, s.OutputsDigest() == sides[i].OutputsDigest())
		}
	}
}

// A build that makes a file of what it linked leaves one the relinks do
// not reach: each layout is then built on its own, and still moves.
func TestLayoutsOfABuildThatRewritesItsLinkAreBuiltEach(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, layoutFiles, "[targets.t]\nbuild = \"cc -O2 -o prog.tmp main.c hot.c && { cat prog.tmp; echo; } > $HONE_OUT/prog && chmod +x $HONE_OUT/prog\"\n")
	r := f.start(false)
	ls, _, err := r.LayoutsFor(f.pin, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	plain := f.build(r, Candidate, f.pin)
	at := symbols(t, filepath.Join(plain.Out, "prog"), "main")
	sides, err := r.BuildLayouts(context.Background(), Candidate, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sides {
		l := ls[i+1]
		if !s.OK() || s.Relinked {
			t.Errorf("layout %d: %s, relinked %v", l.Index, s.Describe(), s.Relinked)
		}
		if moved := symbols(t, filepath.Join(s.Out, "prog"), "main"); moved["main"]-at["main"] != uint64(l.Pad) {
			t.Errorf("layout %d (pad %d): main moved from %#x to %#x", l.Index, l.Pad, at["main"], moved["main"])
		}
	}
}

// A C++ program links through the c++ wrapper of the same shim.
func TestCXXLayoutBuildMovesTheProgramsCode(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
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
	t.Parallel()
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

// A Go target's layouts are function orders its own linker draws: each
// puts main's functions elsewhere and prints what the plain build prints.
func TestGoLayoutsReorderTheProgramsFunctions(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, goFiles(t), goTarget)
	f.warmGo() // the subject is the layouts' link, not a cold build
	r := f.start(false)
	ls, why, err := r.LayoutsFor(f.pin, 5, 3)
	if err != nil || len(ls) != 3 || ls[1].Order == 0 || ls[1].Pad != 0 {
		t.Fatalf("a Go target's layouts: %v (%q, %v)", ls, why, err)
	}
	plain := f.build(r, Baseline, f.pin)
	want, _ := run(t, plain, "$HONE_OUT/prog")
	addrs := map[uint64]bool{symbols(t, filepath.Join(plain.Out, "prog"), "main.main")["main.main"]: true}
	sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sides {
		if !s.OK() {
			t.Fatalf("layout %d: %s", i+1, s.Describe())
		}
		if got, _ := run(t, s, "$HONE_OUT/prog"); got != want {
			t.Errorf("layout %d prints %q, the plain build %q", i+1, got, want)
		}
		addrs[symbols(t, filepath.Join(s.Out, "prog"), "main.main")["main.main"]] = true
	}
	if len(addrs) != 3 {
		t.Errorf("main.main at %d addresses in 3 layouts", len(addrs))
	}
}

// rustFiles is a std-only crate whose hot function keeps its name.
var rustFiles = map[string]string{
	"targets/t/Cargo.toml": "[package]\nname = \"prog\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
	"targets/t/src/main.rs": `#[no_mangle]
#[inline(never)]
pub extern "C" fn hot(n: u64) -> u64 {
    let mut s = 0;
    for i in 0..n {
        s += i * i % 7;
    }
    s
}

fn main() {
    println!("{}", hot(std::env::args().count() as u64 + 1000));
}
`,
}

// A Rust program links through cc, so the shim lays it out as it does C,
// through rust-lld's collection of unused sections too. Each layout is a
// cargo build of its own: cargo rewrites, as it exits, the file in which
// it records the compiler's PATH, which the shim changes, and a file
// written after the links may have been made from them. rustup's
// toolchains are in root's home, which the jail reads only as read_only.
func TestRustLayoutsMoveTheProgramsCode(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	cargo, err := exec.LookPath("cargo")
	home := filepath.Dir(filepath.Dir(cargo))
	if err != nil || !isDir(filepath.Join(filepath.Dir(home), ".rustup")) {
		t.Skip("no rustup toolchain")
	}
	rustup := filepath.Join(filepath.Dir(home), ".rustup")
	f := newFixture(t, rustFiles, fmt.Sprintf(`[sandbox]
read_only = [%q, %q]

[targets.t]
build = "RUSTUP_HOME=%s CARGO_HOME=%s cargo build --release --offline -q --target-dir $HONE_OUT/t"
`, home, rustup, rustup, home))
	r := f.start(false)
	ls, why, err := r.LayoutsFor(f.pin, 9, 3)
	if err != nil || len(ls) != 3 || ls[1].Pad == 0 {
		t.Fatalf("a Rust target's layouts: %v (%q, %v)", ls, why, err)
	}
	plain := f.build(r, Baseline, f.pin)
	if !plain.OK() {
		t.Fatalf("cargo build: %s", plain.Describe())
	}
	bin := filepath.Join("t", "release", "prog")
	want, _ := run(t, plain, "$HONE_OUT/"+bin)
	at := symbols(t, filepath.Join(plain.Out, bin), "hot")["hot"]
	sides, err := r.BuildLayouts(context.Background(), Baseline, f.pin, plain, ls[1:])
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sides {
		l := ls[i+1]
		if !s.OK() {
			t.Fatalf("layout %d: %s", l.Index, s.Describe())
		}
		if got, _ := run(t, s, "$HONE_OUT/"+bin); got != want {
			t.Errorf("layout %d prints %q, the plain build %q", l.Index, got, want)
		}
		if moved := symbols(t, filepath.Join(s.Out, bin), "hot")["hot"]; moved-at != uint64(l.Pad) {
			t.Errorf("layout %d (pad %d): hot moved from %#x to %#x", l.Index, l.Pad, at, moved)
		}
	}
}

// cmake and meson link while they configure (compiler ids, try_compile,
// sanity checks, in CMakeFiles and meson-private folders; meson's
// -Wl,--version makes no file at all) before they write the files that
// record the shim's path, and ninja logs every step, the links too: none
// of that makes a build's layouts each build again. They are relinked,
// into the very programs their own builds give.
func TestLayoutsOfCMakeAndMesonBuildsAreRelinked(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	for _, c := range []struct{ tool, file, text, build string }{
		{"cmake", "CMakeLists.txt", "cmake_minimum_required(VERSION 3.10)\nproject(t C)\nadd_library(hot STATIC hot.c)\nadd_executable(prog main.c)\ntarget_link_libraries(prog hot)\n",
			"cmake -S . -B $HONE_OUT/build -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build $HONE_OUT/build > /dev/null"},
		{"meson", "meson.build", "project('t', 'c')\nexecutable('prog', 'main.c', 'hot.c')\n",
			"meson setup $HONE_OUT/build > /dev/null && meson compile -C $HONE_OUT/build > /dev/null"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(c.tool); err != nil {
				t.Skipf("%s is not installed (scripts/ci-deps.sh installs it)", c.tool)
			}
			files := map[string]string{
				"targets/t/" + c.file: c.text,
				"targets/t/hot.c":     layoutFiles["targets/t/hot.c"],
				"targets/t/main.c":    layoutFiles["targets/t/main.c"],
			}
			f := newFixture(t, files, fmt.Sprintf("[targets.t]\nbuild = %q\n", c.build))
			r := f.start(false)
			ls, _, err := r.LayoutsFor(f.pin, 11, 3)
			if err != nil {
				t.Fatal(err)
			}
			plain := f.build(r, Candidate, f.pin)
			at := symbols(t, filepath.Join(plain.Out, "build", "prog"), "main")
			sides, err := r.BuildLayouts(context.Background(), Candidate, f.pin, plain, ls[1:])
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range sides {
				l := ls[i+1]
				if !s.OK() || s.Relinked != (i > 0) {
					t.Fatalf("layout %d: %s, relinked %v", l.Index, s.Describe(), s.Relinked)
				}
				if moved := symbols(t, filepath.Join(s.Out, "build", "prog"), "main"); moved["main"]-at["main"] != uint64(l.Pad) {
					t.Errorf("layout %d (pad %d): main moved from %#x to %#x", l.Index, l.Pad, at["main"], moved["main"])
				}
				own, err := f.start(false).BuildLayout(context.Background(), Candidate, f.pin, l)
				if err != nil || !own.OK() {
					t.Fatalf("layout %d built on its own: %v", l.Index, err)
				}
				if !sameFile(t, filepath.Join(own.Out, "build", "prog"), filepath.Join(s.Out, "build", "prog")) {
					t.Errorf("layout %d: its own build's program differs from the relinked one", l.Index)
				}
			}
		})
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// oneStepFiles build a shared library and a program each in one command
// that compiles and links (lz4's library is made so), and log every run
// of the assembler on compiled C in the relinking build's folder of
// layouts, through gcc's -B: one line per compile.
var oneStepFiles = map[string]string{
	"targets/t/Makefile": "default: libhot.so prog\n" +
		"libhot.so: hot.c\n\t$(CC) -O2 $(CFLAGS) -shared -fPIC $^ -o $@\n" +
		"prog: main.c hot.c\n\t$(CC) -O2 $(CFLAGS) $^ -o $@\n",
	"targets/t/hot.c":  layoutFiles["targets/t/hot.c"],
	"targets/t/main.c": layoutFiles["targets/t/main.c"],
}

const oneStepBuild = `mkdir -p /tmp/as && printf '#!/bin/sh\ncase "$*" in *layout-pad-*) ;; *) [ ! -d /hone/layouts ] || echo compile >> /hone/layouts/compiles ;; esac\nexec as "$@"\n' > /tmp/as/as && chmod +x /tmp/as/as && make CFLAGS='-B/tmp/as/ %s'`

// A link that compiles its sources as well compiles them once for all the
// layouts it is linked again in, not once per layout, and its layouts are
// the programs their own builds give. One whose sources the shim cannot
// tell surely (-x names their language) compiles them in every link, as
// the build does, and is laid out all the same.
func TestALinkThatCompilesItsSourcesCompilesThemOnceForEveryLayout(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	for _, c := range []struct {
		name, flags string
		compiles    int
	}{
		// The build compiles hot.c for the library, main.c and hot.c for
		// the program: three compiles, and three more for all the relinks,
		// or three for each of the three layouts linked again.
		{"sources by their names", "", 6},
		{"sources in a language -x names", "-x c", 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			build := fmt.Sprintf(oneStepBuild, c.flags)
			f := newFixture(t, oneStepFiles, "[targets.t]\nbuild = \""+strings.ReplaceAll(strings.ReplaceAll(build, `\`, `\\`), `"`, `\"`)+"\"\n")
			r := f.start(false)
			ls, _, err := r.LayoutsFor(f.pin, 7, 4)
			if err != nil {
				t.Fatal(err)
			}
			plain := f.build(r, Candidate, f.pin)
			if !plain.OK() {
				t.Fatalf("the plain build: %s %s", plain.Describe(), plain.Result.Stderr.Bytes())
			}
			sides, err := r.BuildLayouts(context.Background(), Candidate, f.pin, plain, ls[1:])
			if err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(filepath.Join(sides[0].relinks, "compiles"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(log), "compile\n"); n != c.compiles {
				t.Errorf("%d compiles in the relinking build of %d layouts, want %d", n, len(ls)-1, c.compiles)
			}
			for i, s := range sides {
				l := ls[i+1]
				if !s.OK() || s.Unmoved != "" || s.Relinked != (i > 0) {
					t.Fatalf("layout %d: %s, unmoved %q, relinked %v", l.Index, s.Describe(), s.Unmoved, s.Relinked)
				}
				own, err := f.start(false).BuildLayout(context.Background(), Candidate, f.pin, l)
				if err != nil || !own.OK() {
					t.Fatalf("layout %d built on its own: %v", l.Index, err)
				}
				for _, p := range []string{"libhot.so", "prog"} {
					if !sameFile(t, filepath.Join(own.Src, "targets", "t", p), filepath.Join(s.Src, "targets", "t", p)) {
						t.Errorf("layout %d: its own build's %s differs from the relinked one", l.Index, p)
					}
				}
			}
		})
	}
}
