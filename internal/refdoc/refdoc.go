// Package refdoc writes hone's reference pages, one man page or markdown file
// per command, from the cobra command tree itself, so they never drift from
// --help. It replaces cobra/doc, whose markdown and YAML dependencies cost
// every hone start their package initialisation.
//
// The pages carry no generation date: regenerating them for an unchanged CLI
// rewrites the same bytes. The package never prints; it writes files and
// returns their paths.
package refdoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
)

// commands returns the commands that get a page: root and every available,
// non-help-topic descendant, root first, then depth-first in cobra's command
// order (the order of cobra/doc's generators). It adds the default --help flag
// to each, so the pages list the same options as --help.
func commands(root *cobra.Command) []*cobra.Command {
	var list []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		list = append(list, c)
		for _, sub := range c.Commands() {
			if documented(sub) {
				walk(sub)
			}
		}
	}
	walk(root)
	return list
}

// documented reports whether c gets a page of its own, so SEE ALSO links
// only to pages that exist.
func documented(c *cobra.Command) bool {
	return c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand()
}

// byName returns cs sorted by name, leaving cs as it is.
func byName(cs []*cobra.Command) []*cobra.Command {
	return slices.SortedFunc(slices.Values(cs), func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
}

// writePages renders every command of root's tree into dir, which must
// exist, and returns the written paths in the order of commands.
func writePages(root *cobra.Command, dir string, name func(*cobra.Command) string, render func(*cobra.Command) []byte) ([]string, error) {
	var files []string
	for _, c := range commands(root) {
		path := filepath.Join(dir, name(c))
		if err := os.WriteFile(path, render(c), 0o644); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// doc is a command's Long text (or Short, when there is no Long) split into
// its description and the titled sections that follow it, such as the EXIT
// STATUS section every hone command ends with.
type doc struct {
	description []block
	sections    []section
}

type section struct {
	title  string
	blocks []block
}

type blockKind int

const (
	prose    blockKind = iota // lines to fill
	verbatim                  // indented lines, kept line for line
	heading                   // a markdown "#" line standing alone, as in cobra's completion help
)

// A block is a run of lines of one kind. joined marks a block that continues
// the paragraph before it with no blank line between them, like an indented
// list right under the line that introduces it.
type block struct {
	kind   blockKind
	lines  []string
	joined bool
}

// parseDoc splits text into paragraphs at blank lines and into blocks where
// indentation starts or stops. A paragraph that is a single upper-case line
// ("EXIT STATUS") starts a section that runs to the next such line.
func parseDoc(text string) doc {
	var d doc
	blocks := &d.description
	open := false // whether the last block of *blocks still takes lines
	for _, line := range strings.Split(strings.Trim(text, "\n"), "\n") {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		switch {
		case line == "":
			open = false
		case !open && isSectionTitle(line):
			d.sections = append(d.sections, section{title: line})
			blocks = &d.sections[len(d.sections)-1].blocks
		case !open && strings.HasPrefix(line, "#") && strings.HasPrefix(strings.TrimLeft(line, "#"), " "):
			*blocks = append(*blocks, block{kind: heading, lines: []string{strings.TrimSpace(strings.TrimLeft(line, "#"))}})
		default:
			kind := prose
			if line[0] == ' ' || line[0] == '\t' {
				kind = verbatim
			}
			if !open || (*blocks)[len(*blocks)-1].kind != kind {
				*blocks = append(*blocks, block{kind: kind, joined: open})
				open = true
			}
			last := &(*blocks)[len(*blocks)-1]
			last.lines = append(last.lines, line)
		}
	}
	return d
}

// isSectionTitle reports whether line reads as a man page section title:
// upper-case words only, like "EXIT STATUS".
func isSectionTitle(line string) bool {
	letters := 0
	for _, r := range line {
		switch {
		case r >= 'A' && r <= 'Z':
			letters++
		case r != ' ':
			return false
		}
	}
	return letters >= 2 && line[0] != ' '
}

// description returns the text a command's page describes it with.
func description(c *cobra.Command) string {
	if c.Long != "" {
		return c.Long
	}
	return c.Short
}
