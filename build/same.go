package build

import (
	"maps"
	"slices"
)

// Differences lists, sorted, the paths of s's trees ("src/..." for the
// checkout as the build left it, "out/..." for $HONE_OUT) whose type,
// mode, content or link target differ from o's, or that only one of them
// has. known is false when either side's trees were not read (a build
// that failed): nothing can then be said to be the same.
func (s *Side) Differences(o *Side) (paths []string, known bool) {
	if s.tree == nil || o.tree == nil {
		return nil, false
	}
	for p, e := range s.tree {
		if f, ok := o.tree[p]; !ok || f != e {
			paths = append(paths, p)
		}
	}
	for p := range o.tree {
		if _, ok := s.tree[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths, true
}

// Programs lists, sorted, the side's linked files wherever the build left
// them (see programs), as "src/..." or "out/...".
func (s *Side) Programs() []string {
	return slices.Sorted(maps.Keys(s.programs()))
}
