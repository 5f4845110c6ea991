package refdoc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ManHeader fills the .TH line of every man page. The date field stays
// empty, so the pages do not change unless the commands do.
type ManHeader struct {
	Title   string // default: the page's name in upper case, e.g. HONE-VERDICT
	Section string // default "1"
	Source  string // e.g. "hone 1.4.0"
	Manual  string // e.g. "hone manual"
}

// Man writes a roff man page for root and each of its documented descendants
// into dir, which must exist, named like cobra/doc names them: the command
// path joined with "-", then "." and the section (hone-docs-man.1). It
// returns the written paths, root first, then depth-first in command order.
// On error it returns the paths written before it.
func Man(root *cobra.Command, dir string, h ManHeader) ([]string, error) {
	if h.Section == "" {
		h.Section = "1"
	}
	return writePages(root, dir,
		func(c *cobra.Command) string { return manName(c) + "." + h.Section },
		func(c *cobra.Command) []byte { return manPage(c, h) })
}

func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// manPage renders c in the order man-pages(7) gives: NAME, SYNOPSIS,
// DESCRIPTION, OPTIONS, the sections of the Long text (EXIT STATUS), EXAMPLE
// and SEE ALSO. Hyphenation and justification are off, so option names and
// paths stay whole and copyable.
func manPage(c *cobra.Command, h ManHeader) []byte {
	var b strings.Builder
	title := h.Title
	if title == "" {
		title = strings.ToUpper(manName(c))
	}
	fmt.Fprintf(&b, ".TH %s %s \"\" %s %s\n.nh\n.ad l\n", quoted(title), quoted(h.Section), quoted(h.Source), quoted(h.Manual))

	b.WriteString(".SH NAME\n" + text(manName(c)+" - "+c.Short) + "\n")

	b.WriteString(".SH SYNOPSIS\n")
	path := c.CommandPath()
	n := 0
	for _, line := range strings.Split(c.UseLine(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if n++; n > 1 {
			b.WriteString(".br\n")
		}
		if rest, ok := strings.CutPrefix(line, path); ok && (rest == "" || rest[0] == ' ') {
			b.WriteString(`\fB` + escape(path) + `\fP` + escape(rest) + "\n")
		} else {
			b.WriteString(text(line) + "\n")
		}
	}

	d := parseDoc(description(c))
	b.WriteString(".SH DESCRIPTION\n")
	manBlocks(&b, d.description)

	manFlags(&b, "OPTIONS", c.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())

	for _, s := range d.sections {
		b.WriteString(sectionHead(s.title))
		if terms, descs, ok := termList(s.blocks); ok {
			manTermList(&b, terms, descs)
		} else {
			manBlocks(&b, s.blocks)
		}
	}

	if c.Example != "" {
		b.WriteString(".SH EXAMPLE\n.nf\n" + text(strings.Trim(c.Example, "\n")) + "\n.fi\n")
	}

	var refs []string
	if c.HasParent() {
		refs = append(refs, manRef(c.Parent(), h.Section))
	}
	for _, sub := range byName(c.Commands()) {
		if documented(sub) {
			refs = append(refs, manRef(sub, h.Section))
		}
	}
	if len(refs) > 0 {
		b.WriteString(".SH SEE ALSO\n" + strings.Join(refs, ",\n") + "\n")
	}
	return []byte(b.String())
}

func manRef(c *cobra.Command, section string) string {
	return `\fB` + escape(manName(c)) + "(" + escape(section) + `)\fP`
}

// manBlocks writes paragraphs as .PP-separated filled text and indented
// lines as no-fill blocks, so lists and tables in help text keep their shape.
func manBlocks(b *strings.Builder, blocks []block) {
	for i, bl := range blocks {
		if i > 0 && !bl.joined && blocks[i-1].kind != heading {
			b.WriteString(".PP\n")
		}
		switch bl.kind {
		case prose:
			b.WriteString(text(strings.Join(bl.lines, "\n")) + "\n")
		case verbatim:
			b.WriteString(".nf\n" + text(strings.Join(bl.lines, "\n")) + "\n.fi\n")
		case heading:
			b.WriteString(".SS " + quoted(bl.lines[0]) + "\n")
		}
	}
}

// termList reads a section that is a single indented list of "TERM  text"
// lines, like EXIT STATUS's "  0   success", as its terms and their texts.
func termList(blocks []block) (terms, descs []string, ok bool) {
	if len(blocks) != 1 || blocks[0].kind != verbatim {
		return nil, nil, false
	}
	for _, line := range blocks[0].lines {
		term, desc, found := strings.Cut(strings.TrimSpace(line), "  ")
		if !found || strings.ContainsAny(term, " \t") {
			return nil, nil, false
		}
		terms = append(terms, term)
		descs = append(descs, strings.TrimSpace(desc))
	}
	return terms, descs, true
}

// manTermList writes terms and their texts as a compact tagged list.
func manTermList(b *strings.Builder, terms, descs []string) {
	width := 0
	for _, t := range terms {
		width = max(width, len(t))
	}
	b.WriteString(".PD 0\n")
	for i, t := range terms {
		fmt.Fprintf(b, ".TP %dn\n\\fB%s\\fP\n%s\n", width+2, escape(t), text(descs[i]))
	}
	b.WriteString(".PD\n")
}

// manFlags writes the visible flags of flags as a tagged list under title:
// the flag, its shorthand and value name in the tag, its usage and any
// non-zero default in the body, as --help shows them.
func manFlags(b *strings.Builder, title string, flags *pflag.FlagSet) {
	if !flags.HasAvailableFlags() {
		return
	}
	b.WriteString(sectionHead(title))
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		tag := `\fB\-\-` + escape(f.Name) + `\fP`
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = `\fB\-` + escape(f.Shorthand) + `\fP, ` + tag
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			tag += ` \fI` + escape(varname) + `\fP`
		}
		if f.NoOptDefVal != "" && f.Value.Type() != "bool" {
			tag += "[=" + escape(f.NoOptDefVal) + "]"
		}
		if def := defaultText(f); def != "" {
			usage += " (default " + def + ")"
		}
		b.WriteString(".TP\n" + tag + "\n" + text(usage) + "\n")
	})
}

// defaultText is f's default as pflag's usage shows it, or "" when pflag
// leaves it out because it is the type's zero value.
func defaultText(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "string":
		if f.DefValue == "" {
			return ""
		}
		return strconv.Quote(f.DefValue)
	case "duration":
		if f.DefValue == "0s" {
			return ""
		}
	}
	switch f.DefValue {
	case "", "0", "false", "<nil>", "[]", "map[]":
		return ""
	}
	return f.DefValue
}

// text escapes s for roff text lines: every line made safe by escape, and a
// line that would start with a control character ("." or "'") made text
// with a leading \&.
func text(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		line = escape(line)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		lines[i] = line
	}
	return strings.Join(lines, "\n")
}

// escape makes s literal inside a roff line: backslashes print as
// backslashes, hyphens as the hyphen-minus a reader can copy into a shell,
// and characters beyond ASCII as groff's \[uXXXX] so they do not depend on
// the input encoding. Other control characters than tab are dropped.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > '~':
			if r > 0x9f {
				fmt.Fprintf(&b, `\[u%04X]`, r)
			}
		case r < ' ' && r != '\t':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// sectionHead is the .SH line for title, quoted only when it has spaces.
func sectionHead(title string) string {
	if strings.ContainsAny(title, " \t\"") {
		return ".SH " + quoted(title) + "\n"
	}
	return ".SH " + escape(title) + "\n"
}

// quoted makes s one argument of a roff macro.
func quoted(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"`
}
