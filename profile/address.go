package profile

import "github.com/google/pprof/profile"

// resolve turns a perf address into a runtime address inside a mapping and the
// binary's virtual address (what the symbol table and DWARF use). perf 6.1
// prints a sample's own ip at runtime but callchain entries relative to the
// mapped file (ip - start + pgoff), and other versions differ, so both
// readings are tried; the one that agrees with perf's sym+offset wins, and
// without a symbol an address inside a mapping is taken as a runtime address.
func (c *converter) resolve(bin *elfBinary, dso string, f frame) (runtime, vaddr uint64, m *profile.Mapping, ok bool) {
	var asRuntime, asRelative *mmapEvent
	for i := range c.mmaps[c.pid] {
		e := &c.mmaps[c.pid][i]
		if e.file != dso {
			continue
		}
		if asRuntime == nil && f.ip >= e.start && f.ip < e.start+e.size {
			asRuntime = e
		}
		if asRelative == nil && f.ip >= e.pgoff && f.ip < e.pgoff+e.size {
			asRelative = e
		}
	}
	offRuntime := uint64(0)
	if asRuntime != nil {
		offRuntime = f.ip - asRuntime.start + asRuntime.pgoff
	}
	useRuntime := asRuntime != nil
	if want, hasSym := bin.symbol(string(f.sym)); hasSym {
		want += f.symoff
		if v, ok := bin.vaddr(offRuntime); asRuntime != nil && ok && v == want {
			useRuntime = true
		} else if v, ok := bin.vaddr(f.ip); ok && v == want {
			useRuntime = false
		}
	}
	switch {
	case useRuntime:
		m = c.mapping(mapKey{file: dso, start: asRuntime.start, size: asRuntime.size, pgoff: asRuntime.pgoff})
		vaddr, ok = bin.vaddr(offRuntime)
		return f.ip, vaddr, m, ok
	case asRelative != nil:
		m = c.mapping(mapKey{file: dso, start: asRelative.start, size: asRelative.size, pgoff: asRelative.pgoff})
		vaddr, ok = bin.vaddr(f.ip)
		return asRelative.start + f.ip - asRelative.pgoff, vaddr, m, ok
	}
	// No mapping event for this file (a kernel frame, or output recorded
	// without --show-mmap-events): keep perf's address in a mapping of its own.
	vaddr, ok = bin.vaddr(f.ip)
	return f.ip, vaddr, c.mapping(mapKey{file: dso}), ok
}

func (c *converter) mapping(k mapKey) *profile.Mapping {
	if m, ok := c.mappings[k]; ok {
		return m
	}
	m := &profile.Mapping{ID: uint64(len(c.p.Mapping) + 1), File: k.file, Start: k.start, Limit: k.start + k.size, Offset: k.pgoff}
	c.mappings[k] = m
	c.p.Mapping = append(c.p.Mapping, m)
	return m
}

func (c *converter) binary(dso string) *elfBinary {
	b, ok := c.binaries[dso]
	if !ok {
		b = openBinary(dso, c.paths.Open)
		c.binaries[dso] = b
	}
	return b
}
