package profile

import (
	"debug/dwarf"
	"debug/elf"
	"os"
	"sort"
	"sync"
)

// elfBinary is what hone knows about one ELF file named by perf: how to turn a
// file offset into a virtual address, and the DWARF line table. Files that do
// not open as ELF ([vdso], [kernel.kallsyms], deleted files) yield a binary
// with ok == false and no lines.
type elfBinary struct {
	path  string
	open  func(string) (*os.File, error)
	ok    bool
	loads []elf.ProgHeader

	symsOnce sync.Once
	syms     map[string]uint64 // name -> value, for names defined once

	inlOnce sync.Once
	subs    []subprogram // those with inlined calls, by address

	linesOnce sync.Once
	rows      []lineRow
	files     []string

	dwarfOnce sync.Once
	dwarfData *dwarf.Data // nil when the file has no readable DWARF
}

type lineRow struct {
	addr uint64
	file int32
	line int32
	end  bool // end of a sequence: no line from here on
}

// openBinary reads the file perf named path, opened with open (see
// Paths.Open).
func openBinary(path string, open func(string) (*os.File, error)) *elfBinary {
	b := &elfBinary{path: path, open: open}
	f, err := b.elf()
	if err != nil {
		return b
	}
	defer f.Close()
	b.ok = true
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			b.loads = append(b.loads, p.ProgHeader)
		}
	}
	return b
}

// dwarf parses the file's DWARF once for both its users, the line table and
// the inline frames. The parsed data holds its own copy of the sections, so
// the file is closed at once.
func (b *elfBinary) dwarf() *dwarf.Data {
	b.dwarfOnce.Do(func() {
		if !b.ok {
			return
		}
		f, err := b.elf()
		if err != nil {
			return
		}
		defer f.Close()
		if d, err := f.DWARF(); err == nil {
			b.dwarfData = d
		}
	})
	return b.dwarfData
}

// elfFile is an ELF file with the file it was read from, closed together.
type elfFile struct {
	*elf.File
	f *os.File
}

func (e elfFile) Close() error { return e.f.Close() }

func (b *elfBinary) elf() (elfFile, error) {
	open := b.open
	if open == nil {
		open = os.Open
	}
	f, err := open(b.path)
	if err != nil {
		return elfFile{}, err
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		f.Close()
		return elfFile{}, err
	}
	return elfFile{ef, f}, nil
}

// vaddr converts a file offset into the virtual address the symbol table and
// DWARF use; ok is false when no loadable segment covers the offset.
func (b *elfBinary) vaddr(off uint64) (uint64, bool) {
	for _, p := range b.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// symbol returns the virtual address of a symbol defined once in the
// binary's symbol tables; a name defined at several addresses (two static
// functions of the same name) is not found, so the caller falls back to the
// address perf printed.
func (b *elfBinary) symbol(name string) (uint64, bool) {
	b.symsOnce.Do(b.loadSymbols)
	v, ok := b.syms[name]
	return v, ok
}

func (b *elfBinary) loadSymbols() {
	if !b.ok {
		return
	}
	f, err := b.elf()
	if err != nil {
		return
	}
	defer f.Close()
	b.syms = map[string]uint64{}
	ambiguous := map[string]bool{}
	add := func(syms []elf.Symbol, err error) {
		for _, s := range syms {
			if err != nil || s.Name == "" || s.Value == 0 || ambiguous[s.Name] {
				continue
			}
			if v, seen := b.syms[s.Name]; seen && v != s.Value {
				delete(b.syms, s.Name)
				ambiguous[s.Name] = true
				continue
			}
			b.syms[s.Name] = s.Value
		}
	}
	add(f.Symbols())
	add(f.DynamicSymbols())
}

// line returns the source file and line of a virtual address, from the DWARF
// line table read once on first use.
func (b *elfBinary) line(vaddr uint64) (file string, line int, ok bool) {
	b.linesOnce.Do(b.loadLines)
	rows := b.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > vaddr }) - 1
	if i < 0 || rows[i].end || rows[i].line == 0 {
		return "", 0, false
	}
	return b.files[rows[i].file], int(rows[i].line), true
}

func (b *elfBinary) loadLines() {
	d := b.dwarf()
	if d == nil {
		return
	}
	fileIdx := map[string]int32{}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		r.SkipChildren()
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		var e dwarf.LineEntry
		for {
			// io.EOF ends the unit; a damaged line program loses only its own unit's lines.
			if err := lr.Next(&e); err != nil {
				break
			}
			row := lineRow{addr: e.Address, line: int32(e.Line), end: e.EndSequence}
			if !e.EndSequence && e.File != nil {
				idx, seen := fileIdx[e.File.Name]
				if !seen {
					idx = int32(len(b.files))
					fileIdx[e.File.Name] = idx
					b.files = append(b.files, e.File.Name)
				}
				row.file = idx
			}
			b.rows = append(b.rows, row)
		}
	}
	// At equal addresses an end-of-sequence row sorts before the row that
	// starts the next sequence, so a lookup lands on the start.
	sort.SliceStable(b.rows, func(i, j int) bool {
		if b.rows[i].addr != b.rows[j].addr {
			return b.rows[i].addr < b.rows[j].addr
		}
		return b.rows[i].end && !b.rows[j].end
	})
}
