package main

import "slices"

// minAbbrev is the shortest id prefix hone shows and accepts.
const minAbbrev = 4

// abbreviations returns, for each id, its shortest prefix of at least
// minAbbrev characters that no other id of ids shares, as git abbreviates
// object names, so a listing shows exactly what a command will accept.
// Entry ids start with their creation time, so entries made within a
// minute share their first eight or more characters; patch ids, which are
// hashes, rarely need more than the minimum.
func abbreviations(ids []string) map[string]string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := make(map[string]string, len(sorted))
	for i, id := range sorted {
		n := minAbbrev
		for _, nb := range []int{i - 1, i + 1} {
			if nb >= 0 && nb < len(sorted) {
				n = max(n, commonPrefix(id, sorted[nb])+1)
			}
		}
		out[id] = id[:min(n, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
