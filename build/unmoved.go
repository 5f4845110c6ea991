package build

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/sanitize"
)

// A layout moves what the build links and nothing else, wherever the build
// puts it: $HONE_OUT, or the checkout itself, as a Makefile that builds in
// place (programs/lz4) does. So a side's programs, the files a layout must
// change, are its linked files anywhere in its trees; objects and archives
// are compiled, not linked, and are the same in every layout.

// elf header fields: the magic, the byte order at EI_DATA, the object
// type (e_type) after the 16 bytes of e_ident.
const (
	elfHeaderSize = 64
	elfData       = 5
	elfType       = 16
	elfExec       = 2 // ET_EXEC
	elfDyn        = 3 // ET_DYN: a position-independent program or a shared library
)

// programs returns the side's linked files (ELF executables and shared
// objects with an execute bit, as a linker leaves them) by their path below
// the side's folder ("src/..." or "out/..."), with their SHA-256.
func (s *Side) programs() map[string]string {
	out := map[string]string{}
	for p, e := range s.tree {
		if e.Type != typeFile || e.Mode&0o111 == 0 || e.Size < elfHeaderSize {
			continue
		}
		root, rel := s.Src, strings.TrimPrefix(p, "src/")
		if strings.HasPrefix(p, "out/") {
			root, rel = s.Out, p[len("out/"):]
		}
		if linkedFile(root, rel) {
			out[p] = e.SHA256
		}
	}
	return out
}

// linkedFile reports whether the file at rel below root is an ELF program
// or shared object.
func linkedFile(root, rel string) bool {
	f, err := OpenInTree(root, rel)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [elfType + 2]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "\x7fELF" {
		return false
	}
	var order binary.ByteOrder = binary.LittleEndian
	if h[elfData] == 2 {
		order = binary.BigEndian
	}
	t := order.Uint16(h[elfType:])
	return t == elfExec || t == elfDyn
}

// unmoved says why s, built in its layout, links the very programs the
// plain build does, from what that build left behind: whether the
// relinking shim linked anything (its mark and its links in relinks), and
// the build's own log, which names the command that linked past the shim.
// It costs no other build.
func (s *Side) unmoved() string {
	if s.Layout != nil && s.Layout.Order != 0 {
		return "go's linker was not given the layout's function order: GOFLAGS carries it (-ldflags=-randlayout), which a build that passes -ldflags of its own replaces, and a program go does not link never sees"
	}
	if len(s.programs()) == 0 {
		return "its build leaves no linked program (an ELF executable or shared library) in the checkout or $HONE_OUT"
	}
	switch linked, files := s.shimLinks(); {
	case len(files) > 0:
		return fmt.Sprintf("the layout shim linked %s, but the build's programs are the plain build's: the build makes them otherwise", strings.Join(files, ", "))
	case linked:
		return "the layout shim linked only outside the checkout and $HONE_OUT, and the build's programs are the plain build's"
	}
	cmd, word := linkCommand(s.Result)
	wrapped := strings.Join(sanitize.Compilers(), ", ")
	switch {
	case cmd == "":
		return fmt.Sprintf("no link went through the layout shim (%s first on the build's PATH), and the build's log shows no link command: make the build print its commands to see which", wrapped)
	case strings.Contains(word, "/"):
		return fmt.Sprintf("`%s` names its compiler by path, so the layout shim (%s first on the build's PATH) never links: call it by name, as cc or $(CC)", cmd, wrapped)
	case !slices.Contains(sanitize.Compilers(), word):
		return fmt.Sprintf("`%s` links with %s, which the layout shim does not wrap (it wraps %s)", cmd, word, wrapped)
	}
	return fmt.Sprintf("`%s` does not reach the layout shim hone puts first on PATH: the build runs it with a PATH of its own", cmd)
}

// shimLinks reports whether the relinking shim linked any file, and
// which of the checkout's and the output's it linked (as relinkDir holds
// them for the next layout). A build without the relinking shim (a single
// other layout) has no record.
func (s *Side) shimLinks() (linked bool, files []string) {
	if s.relinks == "" {
		return false, nil
	}
	if _, err := os.Lstat(filepath.Join(s.relinks, linkedMark)); err != nil {
		return false, nil
	}
	ents, _ := os.ReadDir(s.relinks)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.relinks, e.Name())
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		break
	}
	sort.Strings(files)
	if len(files) > 3 {
		files = append(files[:3], "...")
	}
	return true, files
}

// linkerRE matches the name of a C or C++ compiler driver or a linker, as
// a build names it: cc, gcc-12, x86_64-linux-gnu-g++, clang++-17, ld.lld.
var linkerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*-)?(?:cc|gcc|c\+\+|g\+\+|clang|clang\+\+|ld|ld\.[a-z]+|lld)(?:-[0-9.]+)?$`)
})

// linkCommand finds the first link in a build's log: a line that runs a
// compiler driver or a linker with -o and without -c, -S or -E. It returns
// the line (its words, clipped) and the program as the line names it, or "".
func linkCommand(res *jail.Result) (line, word string) {
	if res == nil {
		return "", ""
	}
	for _, out := range []*jail.Output{&res.Stdout, &res.Stderr} {
		for _, text := range [][]byte{out.Bytes(), out.Tail(8 << 10)} {
			for _, l := range strings.Split(string(text), "\n") {
				f := strings.Fields(l)
				if len(f) < 2 || !linkerRE().MatchString(path.Base(f[0])) {
					continue
				}
				compiles := slices.ContainsFunc(f[1:], func(a string) bool { return a == "-c" || a == "-S" || a == "-E" })
				if !compiles && slices.ContainsFunc(f[1:], func(a string) bool { return strings.HasPrefix(a, "-o") }) {
					return errs.ClipTo(strings.Join(f, " "), 160), f[0]
				}
			}
		}
	}
	return "", ""
}
