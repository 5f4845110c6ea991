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
// bytes before the program's code.
type Layout struct {
	Index int `toml:"index" json:"index"`
	Pad   int `toml:"pad" json:"pad"`
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

// LayoutsApply says whether the target's toolchain can be laid out by
// the compiler shim: C, C++ and Rust (whose linker is cc) can; a Go
// target, whose linker is its own, or one without a build command cannot.
// why says why not, for the verdict.
func (r *Run) LayoutsApply(commit string) (ok bool, why string, err error) {
	if r.target.Build == "" {
		return false, "no build command", nil
	}
	c, err := r.repo.Store("").ReadCommit(repo.NewHash(commit))
	if err != nil {
		return false, "", errs.Wrap(errs.Failure, err, "cannot read commit %s", commit)
	}
	langs, err := r.languages(c)
	if err != nil {
		return false, "", err
	}
	if slices.Contains(langs, sanitize.Go) {
		return false, "Go links its own code", nil
	}
	if !slices.ContainsFunc(langs, func(l string) bool { return l == sanitize.C || l == sanitize.CXX || l == sanitize.Rust }) {
		return false, "no C, C++ or Rust sources", nil
	}
	return true, "", nil
}

// BuildLayout is Build in layout l: the same build command with a
// compiler shim first on PATH that links a padding object before the
// program's own code. The side's bench runs get the same PATH (a command
// that compiles at run time is laid out too). Layout builds are never
// cached: their pads are drawn per verdict. A layout without padding is
// the plain build.
func (r *Run) BuildLayout(ctx context.Context, role Role, commit string, l Layout) (*Side, error) {
	if l.Pad == 0 {
		return r.Build(ctx, role, commit)
	}
	return r.build(ctx, role, commit, variant{layout: &l})
}

// padFile is the padding object's source in the shim folder. Its section
// sorts before every other text section of the default linker scripts
// (GNU ld, gold, lld put .text.unlikely first), so main in .text.startup
// and hot functions in .text.hot move too; it marks the stack
// non-executable as the compiler's own objects do.
const padFile = "layout-pad.s"

// layoutShim writes into dir the padding object and a wrapper for each C
// and C++ compiler of the build's PATH. A wrapper runs the real compiler
// with the padding first among the inputs when the command links, and
// as it is otherwise (compiling, preprocessing, asking the version).
func (r *Run) layoutShim(dir string, l Layout) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create the layout shim directory")
	}
	pad := fmt.Sprintf("\t.section .note.GNU-stack,\"\",@progbits\n\t.section .text.unlikely.hone_layout,\"ax\",@progbits\n\t.skip %d, 0xcc\n", l.Pad)
	if err := os.WriteFile(filepath.Join(dir, padFile), []byte(pad), 0o644); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot write the layout padding")
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
			"done\n" +
			"exec " + shQuote(real) + " " + shQuote(shimDir+"/"+padFile) + " \"$@\"\n"
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot write the layout shim %s", name)
		}
	}
	return nil
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

// OutputsDigest is one hash of a side's build outputs (their paths and
// SHA-256), to tell one layout's binaries from another's in the entry.
func (s *Side) OutputsDigest() string {
	paths := make([]string, 0, len(s.Outputs))
	for p := range s.Outputs {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%s\x00", p, s.Outputs[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}
