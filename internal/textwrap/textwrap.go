// Package textwrap breaks prose into lines for a terminal or a comment.
package textwrap

import "strings"

// Lines breaks text at spaces into lines of at most width columns; a
// word longer than width stands on a line of its own.
func Lines(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
