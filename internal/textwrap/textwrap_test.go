package textwrap

import (
	"slices"
	"testing"
)

func TestLinesBreakAtSpacesWithinTheWidth(t *testing.T) {
	for _, c := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"one two three", 7, []string{"one two", "three"}},
		{"  spaced   out  ", 80, []string{"spaced out"}},
		{"a verylongword b", 4, []string{"a", "verylongword", "b"}},
	} {
		if got := Lines(c.text, c.width); !slices.Equal(got, c.want) {
			t.Errorf("Lines(%q, %d) = %q, want %q", c.text, c.width, got, c.want)
		}
	}
}
