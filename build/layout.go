package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/sanitize"
)

// One build is one sample of code layout: where the linker happens to put
// the hot loop (its offset within a cache line, a decoded-instruction
// window, a page) moves its time by as much as a patch would. A layout is
// another link of the same program with a seeded amount of padding before
// all of the program's own code, so that every function and loop of both
// sides lands at other offsets; pairs measured over several layouts judge
// the patch, not one placement of it.

// Layout is one placement of a side's code. Layout 0 is the plain build,
// the one the gates ran and that ships; the others are linked with Pad
// bytes before the program's code (C, C++, Rust) or with their functions
// in the order Go's linker draws from Order (-ldflags=-randlayout).
type Layout struct {
	Index int `toml:"index" json:"index"`
	Pad   int `toml:"pad" json:"pad"`
	// Order is the Go linker's function-order seed; 0 for a padded layout.
	Order uint32 `toml:"order,omitempty" json:"order,omitempty"`
}

// plain reports whether l is the plain build.
func (l Layout) plain() bool { return l.Pad == 0 && l.Order == 0 }

// cacheKey names what a baseline's layout build depends on beyond the
// plain build's key: its pad or order, and the shim that applied it. v2
// entries record why a layout did not move (manifest.Unmoved).
func (l Layout) cacheKey() string {
	if l.plain() {
		return ""
	}
	return fmt.Sprintf("layout v2 pad %d order %d", l.Pad, l.Order)
}

// layoutStep is the smallest shift that moves code: functions and loops
// are aligned to 16 bytes, so a smaller pad is absorbed by the alignment
// of the code after it. layoutLine is the cache line, the period of the
// offsets that matter most.
const (
	layoutStep = 16
	layoutLine = 64
	// layoutSpan bounds the pad: whole lines up to a 4 KiB page on top of
	// the offset within the line, so that page and aliasing effects are
	// drawn too.
	layoutSpan = 4096
)

// Layouts draws n layouts from seed. Layout 0 is the plain build; the
// offsets within a cache line of the others are a seeded round of the
// offsets the plain one does not have (16, 32, 48), so that four layouts
// put the code at each of the four offsets once and the two sides of a
// pair are measured at every one of them, each plus a seeded number of
// whole lines. The same seed and n give the same layouts, for --recompute.
func Layouts(seed int64, n int) []Layout {
	if n < 1 {
		n = 1
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6c61796f7574))
	offsets := make([]int, 0, layoutLine/layoutStep-1)
	for o := layoutStep; o < layoutLine; o += layoutStep {
		offsets = append(offsets, o)
	}
	out := []Layout{{Index: 0}}
	for k := 1; k < n; k++ {
		round := (k - 1) % len(offsets)
		if round == 0 {
			rng.Shuffle(len(offsets), func(i, j int) { offsets[i], offsets[j] = offsets[j], offsets[i] })
		}
		lines := rng.IntN(layoutSpan / layoutLine)
		out = append(out, Layout{Index: k, Pad: offsets[round] + lines*layoutLine})
	}
	return out
}

// LayoutsFor draws n layouts from seed for the target's toolchain at
// commit: padded ones for C, C++ and Rust (whose linker is cc), which the
// compiler shim links; function orders for Go, whose linker draws them
// itself. It returns nil and why not when the target has no build
// command or neither toolchain.
func (r *Run) LayoutsFor(commit string, seed int64, n int) ([]Layout, string, error) {
	if r.target.Build == "" {
		return nil, "no build command", nil
	}
	c, err := r.repo.Store("").ReadCommit(repo.NewHash(commit))
	if err != nil {
		return nil, "", errs.Wrap(errs.Failure, err, "cannot read commit %s", commit)
	}
	langs, err := r.languages(c)
	if err != nil {
		return nil, "", err
	}
	ls := Layouts(seed, n)
	switch {
	case slices.Contains(langs, sanitize.Go):
		return goOrders(seed, ls), "", nil
	case slices.ContainsFunc(langs, func(l string) bool { return l == sanitize.C || l == sanitize.CXX || l == sanitize.Rust }):
		return ls, "", nil
	}
	return nil, "no C, C++, Rust or Go sources", nil
}

// goOrders makes ls function orders: Go's linker takes no object before
// the runtime's, but shuffles the functions of the whole program when
// given a seed, which moves the hot ones against lines and pages as a
// pad does, and keeps every function aligned as the plain build does.
func goOrders(seed int64, ls []Layout) []Layout {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x72616e646c6179))
	out := make([]Layout, len(ls))
	for i, l := range ls {
		out[i] = Layout{Index: l.Index}
		if i > 0 {
			out[i].Order = uint32(rng.IntN(1<<31)) + 1
		}
	}
	return out
}

// BuildLayout is Build in layout l: the same build command with a
// compiler shim first on PATH that links a padding object before the
// program's own code, or for Go with the linker's function order drawn
// from l.Order. The side's bench runs get the same PATH and environment (a
// command that compiles at run time is laid out too). A baseline's layout
// builds are cached apart from its plain build, by their pad or order. A
// layout without padding or order is the plain build.
func (r *Run) BuildLayout(ctx context.Context, role Role, commit string, l Layout) (*Side, error) {
	if l.plain() {
		return r.Build(ctx, role, commit)
	}
	return r.build(ctx, role, commit, variant{layout: &l})
}

// relinkDir is where the shim of a build that relinks (see BuildLayouts)
// writes each other layout's links: relinkDir/<index>/src/... and
// /out/..., the paths the link's output has below /hone.
const relinkDir = "/hone/layouts"

// linkedMark is the file of relinkDir the shim makes as the build's
// first link starts: its time divides the build's files into those made
// before any link and those made after.
const linkedMark = "linked"

// layoutShim writes into dir the padding object and a wrapper for each C
// and C++ compiler of the build's PATH. A wrapper runs the real compiler
// with the padding first among the inputs when the command links, and
// as it is otherwise (compiling, preprocessing, asking the version). A
// link whose output is in the checkout or the build output is linked
// again for each layout of relink, with its padding, into relinkDir.
func (r *Run) layoutShim(dir string, l Layout, relink []Layout) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create the layout shim directory")
	}
	for _, pl := range append([]Layout{l}, relink...) {
		if err := os.WriteFile(filepath.Join(dir, padName(pl)), []byte(padSource(pl.Pad)), 0o644); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot write the layout padding")
		}
	}
	found := sanitize.FindCompilers(dir, r.shimSearch())
	if len(found) == 0 {
		return errs.Failuref("no C or C++ compiler (%s) on the build's PATH to link another layout with", strings.Join(sanitize.Compilers(), ", "))
	}
	for name, real := range found {
		script := "#!/bin/sh\n" +
			fmt.Sprintf("# hone's layout shim (layout %d): the real %s; a link gets %d bytes of padding before the program's code.\n", l.Index, name, l.Pad) +
			"for a; do\n" +
			"\tcase $a in -c|-S|-E|-M|-MM|-fsyntax-only|-v|--version|--help|-dump*|-print-*|--print-*) exec " + shQuote(real) + " \"$@\" ;; esac\n" +
			"done\n"
		if len(relink) == 0 {
			script += "exec " + shQuote(real) + " " + shQuote(shimDir+"/"+padName(l)) + " \"$@\"\n"
		} else {
			// The mark's time is that of the start of the first link
			// that made a program: a file the build changed before it
			// came from the shim's presence on PATH (a compiler path
			// cmake, meson or cargo records), not from a link. A link
			// into a CMakeFiles or meson-private folder is cmake's or
			// meson's configure probing the compiler (a compiler id,
			// try_compile, a sanity check), and a "link" that makes no
			// file is a probe too (meson's -Wl,--version): both come
			// before the files configure writes with the shim's path in
			// them, so neither marks. The first link to finish keeps its
			// start (ln does not replace a mark). The last -o wins, for
			// gcc and clang alike.
			mark := relinkDir + "/" + linkedMark
			script += "out=a.out next=\n" +
				"for a; do\n" +
				"\tif [ -n \"$next\" ]; then out=$a next=; continue; fi\n" +
				"\tcase $a in -o) next=1 ;; -o?*) out=${a#-o} ;; esac\n" +
				"done\n" +
				"case $out in /*) ;; *) out=$PWD/$out ;; esac\n" +
				"case $out in */CMakeFiles/*|*/meson-private/*) ;; *) [ -e " + mark + " ] || : > " + mark + ".$$ ;; esac\n" +
				shQuote(real) + " " + shQuote(shimDir+"/"+padName(l)) + " \"$@\" || { s=$?; rm -f " + mark + ".$$; exit $s; }\n" +
				"if [ -e " + mark + ".$$ ]; then\n" +
				"\t[ ! -f \"$out\" ] || ln " + mark + ".$$ " + mark + " 2>/dev/null\n" +
				"\trm -f " + mark + ".$$\n" +
				"fi\n" +
				"case $out in " + SrcDir + "/*|" + OutDir + "/*) ;; *) exit 0 ;; esac\n"
			script += "real=" + shQuote(real) + "\n" + compileOnce
			for _, pl := range relink {
				dest := fmt.Sprintf("%s/%d/${out#/hone/}", relinkDir, pl.Index)
				script += fmt.Sprintf("mkdir -p \"$(dirname \"%s\")\" && %s %s \"$@\" -o \"%s\" || exit 0\n", dest, shQuote(real), shQuote(shimDir+"/"+padName(pl)), dest)
			}
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot write the layout shim %s", name)
		}
	}
	return nil
}

// compileOnce is the part of a relinking shim that makes a link which
// compiles sources as well (cc -shared a.c b.c -o lib.so, as lz4's
// library is built) compile them once for every other layout's link, not
// once each: only the link differs between layouts, and gcc and clang give
// the same program from the objects as from the sources. It sets "$@" to
// the link with each source replaced by its object. A command it cannot
// take apart surely (-x, dependency files, -save-temps, stdin) or a compile
// that fails leaves "$@" as it was, and each layout's link compiles again.
const compileOnce = `hq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
all= flags= args= srcs= next= odd= n=0 objs=/tmp/hone-objects.$$
for a; do
	q=$(hq "$a")
	all="$all $q"
	case $next in
	both) flags="$flags $q" args="$args $q" next=; continue ;;
	link) args="$args $q" next=; continue ;;
	esac
	case $a in
	-x*|-M*|-save-temps*|-) odd=1 ;;
	-o) args="$args $q" next=link ;;
	-o?*) args="$args $q" ;;
	-I|-D|-U|-B|-include|-imacros|-iquote|-isystem|-idirafter|-isysroot|--sysroot|-L|-l|-T|-u|-z|-e|-Xlinker|-Xassembler|-Xpreprocessor|--param|-target|-arch)
		flags="$flags $q" args="$args $q" next=both ;;
	-*) flags="$flags $q" args="$args $q" ;;
	*.c|*.cc|*.cp|*.cxx|*.cpp|*.CPP|*.c++|*.C|*.s|*.S|*.sx|*.i|*.ii)
		n=$((n+1))
		srcs="$srcs $q" args="$args '$objs/$n.o'" ;;
	*) args="$args $q" ;;
	esac
done
if [ -z "$odd" ] && [ "$n" -gt 0 ] && mkdir "$objs"; then
	eval "set -- $srcs"
	k=0
	for s; do
		k=$((k+1))
		eval "\"\$real\" $flags -c \"\$s\" -o \"\$objs/\$k.o\"" 2>/dev/null || { odd=1; break; }
	done
	if [ -z "$odd" ]; then eval "set -- $args"; else eval "set -- $all"; fi
fi
`

// padName is layout l's padding object's source in the shim folder.
func padName(l Layout) string { return fmt.Sprintf("layout-pad-%d.s", l.Index) }

// padSource is the padding object: its section sorts before every other
// text section of the default linker scripts (GNU ld, gold, lld put
// .text.unlikely first), so main in .text.startup and hot functions in
// .text.hot move too; it is retained (R, SHF_GNU_RETAIN) against a link
// that collects unused sections, as rustc's do; it marks the stack
// non-executable as the compiler's own objects do.
func padSource(pad int) string {
	return fmt.Sprintf("\t.section .note.GNU-stack,\"\",@progbits\n\t.section .text.unlikely.hone_layout,\"axR\",@progbits\n\t.skip %d, 0xcc\n", pad)
}

// languages lists the languages of the target's files at c, or of the
// whole tree when the target's own say nothing (a Go package whose go.mod
// is above it).
func (r *Run) languages(c *repo.Commit) ([]string, error) {
	var all, own []string
	err := repo.WalkTree(r.repo.Store(""), c.Tree, func(name string, e repo.TreeEntry) error {
		if e.Mode == repo.ModeRegular || e.Mode == repo.ModeExecutable {
			all = append(all, name)
			if r.target.Path == "." || strings.HasPrefix(name, r.target.Path+"/") {
				own = append(own, name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the tree of %s", c.Hash)
	}
	if langs := sanitize.Languages(own); len(langs) > 0 {
		return langs, nil
	}
	return sanitize.Languages(all), nil
}

// shQuote makes s one word for /bin/sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// OutputsDigest is one hash of a side's programs (their paths and
// SHA-256, see programs), to tell one layout's binaries from another's in
// the entry.
func (s *Side) OutputsDigest() string {
	progs := s.programs()
	paths := make([]string, 0, len(progs))
	for p := range progs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\x00", p, progs[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}
