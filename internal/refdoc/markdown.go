package refdoc

import (
	"strings"

	"github.com/spf13/cobra"
)

// Markdown writes a markdown page for root and each of its documented
// descendants into dir, which must exist, named like cobra/doc names them:
// the command path joined with "_", then ".md" (hone_docs_markdown.md). The
// pages follow cobra/doc's layout and link to each other by file name. It
// returns the written paths, root first, then depth-first in command order.
// On error it returns the paths written before it.
func Markdown(root *cobra.Command, dir string) ([]string, error) {
	return writePages(root, dir, markdownName, markdownPage)
}

func markdownName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// markdownPage renders c as cobra/doc does, except that indented lines of the
// Long text are fenced, so lists keep their shape, and its titled sections
// (EXIT STATUS) follow the options, where the man page has them too.
func markdownPage(c *cobra.Command) []byte {
	var b strings.Builder
	b.WriteString("## " + c.CommandPath() + "\n\n" + markdownText(c.Short) + "\n\n")
	d := parseDoc(c.Long)
	if len(d.description) > 0 {
		b.WriteString("### Synopsis\n\n")
		markdownBlocks(&b, d.description)
	}
	if c.Runnable() {
		b.WriteString("```\n" + c.UseLine() + "\n```\n\n")
	}
	if c.Example != "" {
		b.WriteString("### Examples\n\n```\n" + strings.Trim(c.Example, "\n") + "\n```\n\n")
	}
	if flags := c.NonInheritedFlags(); flags.HasAvailableFlags() {
		b.WriteString("### Options\n\n```\n" + flags.FlagUsages() + "```\n\n")
	}
	if flags := c.InheritedFlags(); flags.HasAvailableFlags() {
		b.WriteString("### Options inherited from parent commands\n\n```\n" + flags.FlagUsages() + "```\n\n")
	}
	for _, s := range d.sections {
		b.WriteString("### " + s.title + "\n\n")
		markdownBlocks(&b, s.blocks)
	}

	var refs []string
	if c.HasParent() {
		refs = append(refs, markdownRef(c.Parent()))
	}
	for _, sub := range byName(c.Commands()) {
		if documented(sub) {
			refs = append(refs, markdownRef(sub))
		}
	}
	if len(refs) > 0 {
		b.WriteString("### SEE ALSO\n\n" + strings.Join(refs, "\n") + "\n")
	}
	return []byte(strings.TrimRight(b.String(), "\n") + "\n")
}

func markdownRef(c *cobra.Command) string {
	return "* [" + c.CommandPath() + "](" + markdownName(c) + ")\t - " + markdownText(c.Short)
}

func markdownBlocks(b *strings.Builder, blocks []block) {
	for _, bl := range blocks {
		switch bl.kind {
		case prose:
			b.WriteString(markdownText(strings.Join(bl.lines, "\n")) + "\n\n")
		case verbatim:
			b.WriteString("```\n" + strings.Join(bl.lines, "\n") + "\n```\n\n")
		case heading:
			b.WriteString("#### " + markdownText(bl.lines[0]) + "\n\n")
		}
	}
}

// markdownText escapes "<" outside code spans: help text writes placeholders
// like <git dir>/hone/<target>, which a markdown renderer would otherwise
// take for HTML tags and drop.
func markdownText(s string) string {
	parts := strings.Split(s, "`")
	for i := range parts {
		// Odd parts are inside a code span, except after an unmatched backtick.
		if i%2 == 0 || i == len(parts)-1 {
			parts[i] = strings.ReplaceAll(parts[i], "<", `\<`)
		}
	}
	return strings.Join(parts, "`")
}
