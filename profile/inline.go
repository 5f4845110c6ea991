package profile

import (
	"debug/dwarf"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// srcFrame is one source-level frame of an address: a function and the line
// executing in it.
type srcFrame struct {
	fn   string // empty for the outermost frame: the caller names it from the symbol table
	file string
	line int
}

// inlined is one DW_TAG_inlined_subroutine: code of fn copied into a caller
// at callFile:callLine, covering ranges.
type inlined struct {
	ranges   [][2]uint64
	depth    int
	fn       string
	callFile string
	callLine int
}

// subprogram is a concrete function body and the inlined calls inside it.
type subprogram struct {
	lo, hi  uint64
	inlines []inlined
}

// frames returns the source frames of vaddr, innermost first: the inlined
// functions (named from DWARF), then the physical function, whose name the
// caller supplies. Without inlining it is one frame.
func (b *elfBinary) frames(vaddr uint64) []srcFrame {
	file, line, ok := b.line(vaddr)
	if !ok {
		return nil
	}
	b.inlOnce.Do(b.loadInlines)
	subs := b.subs
	i := sort.Search(len(subs), func(i int) bool { return subs[i].hi > vaddr })
	var chain []*inlined
	if i < len(subs) && subs[i].lo <= vaddr {
		for j := range subs[i].inlines {
			in := &subs[i].inlines[j]
			for _, r := range in.ranges {
				if vaddr >= r[0] && vaddr < r[1] {
					chain = append(chain, in)
					break
				}
			}
		}
	}
	sort.SliceStable(chain, func(a, b int) bool { return chain[a].depth > chain[b].depth })
	out := make([]srcFrame, 0, len(chain)+1)
	for _, in := range chain {
		out = append(out, srcFrame{fn: in.fn, file: file, line: line})
		file, line = in.callFile, in.callLine
	}
	return append(out, srcFrame{file: file, line: line})
}

// loadInlines reads every subprogram with inlined calls from the DWARF info.
// Binaries without DWARF, or with info this reader cannot follow, simply
// report no inlining.
func (b *elfBinary) loadInlines() {
	d := b.dwarf()
	if d == nil {
		return
	}
	names := map[dwarf.Offset]string{}
	r := d.Reader()
	var files []*dwarf.LineFile
	var cur *subprogram
	depth, subDepth := 0, -1
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth <= subDepth {
				b.addSub(cur)
				cur, subDepth = nil, -1
			}
			continue
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			files = nil
			if lr, err := d.LineReader(e); err == nil && lr != nil {
				files = lr.Files()
			}
		case dwarf.TagSubprogram:
			if cur == nil {
				if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
					cur, subDepth = &subprogram{lo: rs[0][0], hi: rs[0][1]}, depth
					for _, rr := range rs[1:] {
						cur.lo, cur.hi = min(cur.lo, rr[0]), max(cur.hi, rr[1])
					}
				}
			}
		case dwarf.TagInlinedSubroutine:
			if cur != nil {
				if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
					in := inlined{ranges: rs, depth: depth, fn: originName(d, e, names)}
					if fi, ok := e.Val(dwarf.AttrCallFile).(int64); ok && fi >= 0 && int(fi) < len(files) && files[fi] != nil {
						in.callFile = files[fi].Name
					}
					if cl, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
						in.callLine = int(cl)
					}
					cur.inlines = append(cur.inlines, in)
				}
			}
		}
		if e.Children {
			depth++
		} else if cur != nil && depth == subDepth {
			b.addSub(cur)
			cur, subDepth = nil, -1
		}
	}
	sort.Slice(b.subs, func(i, j int) bool { return b.subs[i].lo < b.subs[j].lo })
}

func (b *elfBinary) addSub(s *subprogram) {
	if s != nil && len(s.inlines) > 0 {
		b.subs = append(b.subs, *s)
	}
}

// originName is the name of an inlined function, read from its abstract
// origin: the linkage name demangled when there is one (C++, Rust), else
// the plain name (C, Go).
func originName(d *dwarf.Data, e *dwarf.Entry, cache map[dwarf.Offset]string) string {
	off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	if !ok {
		return ""
	}
	if n, ok := cache[off]; ok {
		return n
	}
	name := ""
	r := d.Reader()
	r.Seek(off)
	if o, err := r.Next(); err == nil && o != nil {
		if ln, ok := o.Val(dwarf.AttrLinkageName).(string); ok && (strings.HasPrefix(ln, "_Z") || strings.HasPrefix(ln, "_R")) {
			name = demangle.Filter(ln, demangle.NoParams, demangle.NoEnclosingParams, demangle.NoTemplateParams)
		} else if n, ok := o.Val(dwarf.AttrName).(string); ok {
			name = n
		}
	}
	cache[off] = name
	return name
}
