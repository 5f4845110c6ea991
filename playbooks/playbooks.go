// Package playbooks serves the seven optimization playbook classes, cheapest
// first. Each is markdown with the sections Preconditions, Procedure,
// Verification and Known failure modes. The built-in texts are embedded; a
// workspace file playbooks/NN-*.md at the workspace root replaces class NN.
package playbooks

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// Count is the number of playbook classes; valid numbers are 1..Count.
const Count = 7

// Sections every playbook must have, in this order.
var Sections = []string{"Preconditions", "Procedure", "Verification", "Known failure modes"}

// Playbook is one class. Summary is a single line; Source is "builtin" or the
// path of the workspace file that replaced the built-in text.
type Playbook struct {
	Number   int    `json:"number"`
	Name     string `json:"name"`
	Summary  string `json:"summary"`
	Markdown string `json:"markdown"`
	Source   string `json:"source"`
}

//go:embed builtin/*.md
var builtin embed.FS

// Builtin is the value of Playbook.Source for the embedded texts.
const Builtin = "builtin"

// List returns all seven classes in order, each from the workspace at root
// when it replaces one, else built in. root may be empty: built-ins only.
func List(root string) ([]Playbook, error) {
	out := make([]Playbook, 0, Count)
	for n := 1; n <= Count; n++ {
		p, err := Get(root, n)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, nil
}

// Get returns class n. A number outside 1..Count is a NotFound error naming the
// valid range; a workspace override that is ambiguous or lacks a required
// section is an Invalid error naming the file.
func Get(root string, n int) (*Playbook, error) {
	if n < 1 || n > Count {
		return nil, errs.NotFoundf("no playbook class %d; classes are numbered 1 to %d (see `hone playbook`)", n, Count)
	}
	if root != "" {
		p, err := fromWorkspace(root, n)
		if p != nil || err != nil {
			return p, err
		}
	}
	names, err := fs.Glob(builtin, fmt.Sprintf("builtin/%02d-*.md", n))
	if err != nil || len(names) != 1 {
		return nil, errs.Failuref("built-in playbook %d is missing from this build", n)
	}
	b, err := builtin.ReadFile(names[0])
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read built-in playbook %d", n)
	}
	return parse(n, Builtin, string(b))
}

// fromWorkspace returns the workspace's replacement for class n, or nil when
// there is none.
func fromWorkspace(root string, n int) (*Playbook, error) {
	dir := filepath.Join(root, "playbooks")
	matches, err := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%02d-*.md", n)))
	if err != nil || len(matches) == 0 {
		return nil, nil
	}
	sort.Strings(matches)
	if len(matches) > 1 {
		return nil, errs.Invalidf("playbooks: %d files replace class %d (%s); keep one", len(matches), n, strings.Join(matches, ", "))
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read playbook %s", matches[0])
	}
	return parse(n, matches[0], string(b))
}

// parse reads the name from the first "# " heading (without a leading "N. "),
// the summary from the first paragraph after it, and checks the sections.
func parse(n int, source, md string) (*Playbook, error) {
	p := &Playbook{Number: n, Markdown: md, Source: source}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	i := 0
	for ; i < len(lines); i++ {
		if h, ok := strings.CutPrefix(lines[i], "# "); ok {
			p.Name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(h), fmt.Sprintf("%d.", n)))
			break
		}
	}
	if p.Name == "" {
		return nil, errs.Invalidf("playbook %s: no title; start the file with \"# %d. NAME\"", source, n)
	}
	var para []string
	for i++; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" && len(para) > 0 || strings.HasPrefix(l, "#") {
			break
		}
		if l != "" {
			para = append(para, strings.TrimSpace(strings.TrimLeft(l, ">")))
		}
	}
	p.Summary = strings.Join(para, " ")
	have := map[string]bool{}
	for _, l := range lines {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			have[strings.TrimSpace(h)] = true
		}
	}
	for _, s := range Sections {
		if !have[s] {
			return nil, errs.Invalidf("playbook %s: missing section \"## %s\"; a playbook needs %s", source, s, strings.Join(Sections, ", "))
		}
	}
	return p, nil
}
