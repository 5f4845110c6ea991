package main

import "testing"

func TestAbbreviationsAreTheShortestUniquePrefixes(t *testing.T) {
	ids := []string{"01a2337fec6ac075", "01a2337fec6b0000", "01a2338000000000", "ffff000000000000", "01a2337fec6ac075", "ab"}
	got := abbreviations(ids)
	want := map[string]string{
		"01a2337fec6ac075": "01a2337fec6a", "01a2337fec6b0000": "01a2337fec6b",
		"01a2338000000000": "01a2338", "ffff000000000000": "ffff", "ab": "ab",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: got %q, want %q", id, got[id], w)
		}
	}
}
