package main

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docExample is one hone invocation a page shows in a shell block.
type docExample struct {
	where string // file:line
	args  []string
}

// docPages are the README and the manual's pages; docs/commands is generated
// from the commands themselves (TestDocsCommandReferenceIsFresh).
func docPages(t *testing.T) []string {
	t.Helper()
	top := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(top, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(top, "README.md")}, pages...)
}

// Every hone command line in a shell block of the README or docs/ names a
// command hone has, with flags that command has and arguments it accepts:
// the docs cannot teach a command or flag the CLI does not know. Values
// (PATCH-ID, TARGET) are not checked, only their count.
func TestDocsExamplesAreRealCommands(t *testing.T) {
	var examples []docExample
	for _, page := range docPages(t) {
		examples = append(examples, shellExamples(t, page)...)
	}
	if len(examples) < 20 {
		t.Fatalf("found only %d hone commands in the docs' sh blocks: is the extraction broken?", len(examples))
	}
	for _, ex := range examples {
		if err := checkInvocation(t, ex.args); err != nil {
			t.Errorf("%s: hone %s: %v", ex.where, strings.Join(ex.args, " "), err)
		}
	}
}

// checkInvocation resolves args as hone would and parses its flags, without
// running anything.
func checkInvocation(t *testing.T, args []string) error {
	root := newRoot(newTestIO(t.TempDir(), "").f, nil)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	args = leadingJSON(args)
	if err := checkSubcommands(root, args); err != nil {
		return err
	}
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if cmd.Name() == "help" {
		return nil
	}
	return cmd.ValidateArgs(cmd.Flags().Args())
}

// The extraction itself: what a reader would type is what is checked.
func TestDocsShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{`hone ledger # every proposal`, [][]string{{"hone", "ledger"}}},
		{`hone profile show w --json; hone playbook 5`, [][]string{{"hone", "profile", "show", "w", "--json"}, {"hone", "playbook", "5"}}},
		{`hone verdict --pending w --json > v.json || status=$?`, [][]string{{"hone", "verdict", "--pending", "w", "--json"}, {"status=$?"}}},
		{`hone patch propose w --hypothesis "hash index" --file /tmp/d 2>/dev/null`, [][]string{{"hone", "patch", "propose", "w", "--hypothesis", "hash index", "--file", "/tmp/d"}}},
		{`cd "$(hone worktree enter --name x)" && hone targets`, [][]string{{"cd", "$(hone worktree enter --name x)"}, {"hone", "targets"}, {"hone", "worktree", "enter", "--name", "x"}}},
		{`eval "$(hone shell-init bash)"`, [][]string{{"eval", "$(hone shell-init bash)"}, {"hone", "shell-init", "bash"}}},
	} {
		if got := shellCommands(tc.line); !equalCommands(got, tc.want) {
			t.Errorf("shellCommands(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
	if err := checkInvocation(t, []string{"verdict", "PATCH-ID", "--no-such-flag"}); err == nil {
		t.Error("an unknown flag passed the check")
	}
	if err := checkInvocation(t, []string{"verdcit", "PATCH-ID"}); err == nil {
		t.Error("a misspelt command passed the check")
	}
	if err := checkInvocation(t, []string{"docs", "markdown"}); err == nil {
		t.Error("a missing argument passed the check")
	}
}

func equalCommands(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") {
			return false
		}
	}
	return true
}

// shellExamples returns the hone invocations of page's sh blocks: every
// simple command, in a line or a command substitution, whose program is hone
// (or a path ending in /hone).
func shellExamples(t *testing.T, page string) []docExample {
	t.Helper()
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := filepath.Base(page)
	if filepath.Base(filepath.Dir(page)) == "docs" {
		name = "docs/" + name
	}
	var out []docExample
	inFence, shell := false, false
	var pending string
	start := 0
	s := bufio.NewScanner(f)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inFence {
				info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
				inFence, shell = true, info == "sh" || info == "bash"
			} else {
				inFence, shell = false, false
			}
			continue
		}
		if !shell {
			continue
		}
		if pending == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending += cont + " "
			continue
		}
		for _, words := range shellCommands(pending + line) {
			if len(words) > 0 && (words[0] == "hone" || strings.HasSuffix(words[0], "/hone")) {
				out = append(out, docExample{where: name + ":" + strconv.Itoa(start), args: words[1:]})
			}
		}
		pending = ""
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// shellCommands splits one shell line into its simple commands' words, as
// sh would for quoting, comments, lists, pipes and redirections; the
// commands inside $(...) come after the command that holds them.
func shellCommands(line string) [][]string {
	var cmds, inner [][]string
	var words []string
	var word strings.Builder
	inWord, skipNext := false, false
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if skipNext {
			skipNext = false
			return
		}
		words = append(words, w)
	}
	endCommand := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	// substitution copies a $(...) starting at i into the word and returns
	// the index of its closing parenthesis.
	substitution := func(i int) int {
		depth := 0
		for j := i + 1; j < len(line); j++ {
			switch line[j] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					body := line[i+2 : j]
					inner = append(inner, shellCommands(body)...)
					word.WriteString(line[i : j+1])
					return j
				}
			}
		}
		word.WriteString(line[i:])
		return len(line)
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line):
					i++
					word.WriteByte(line[i])
				case line[i] == '$' && i+1 < len(line) && line[i+1] == '(':
					i = substitution(i)
				default:
					word.WriteByte(line[i])
				}
			}
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			inWord = true
			i = substitution(i)
		case c == '#' && !inWord:
			endCommand()
			return append(cmds, inner...)
		case c == ' ' || c == '\t':
			endWord()
		case c == ';' || c == '|' || c == '&':
			endCommand()
			for i+1 < len(line) && (line[i+1] == '|' || line[i+1] == '&') {
				i++
			}
		case c == '>' || c == '<':
			if inWord && strings.IndexFunc(word.String(), func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
				word.Reset()
				inWord = false
			} else {
				endWord()
			}
			for i+1 < len(line) && (line[i+1] == '>' || line[i+1] == '&') {
				i++
			}
			skipNext = true // the redirection's target is no argument
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCommand()
	return append(cmds, inner...)
}

// generatedDocs are pages a script writes from a measured run
// (scripts/suite-times.sh); docs/development.md links them, and they are
// absent until a tier has been measured.
var generatedDocs = []string{"suite-times.md"}

// Every relative link of the README and docs/ names a file that exists, and
// an anchor names a heading of its page; the README links every page.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	pages := docPages(t)
	readme, err := os.ReadFile(pages[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages[1:] {
		if slices.Contains(generatedDocs, filepath.Base(page)) {
			continue
		}
		rel := "docs/" + filepath.Base(page)
		if !strings.Contains(string(readme), "]("+rel+")") && !strings.Contains(string(readme), "]("+rel+"#") {
			t.Errorf("README.md does not link %s", rel)
		}
	}
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(outsideCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
			}
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && slices.Contains(generatedDocs, filepath.Base(path)) {
				continue
			} else if err != nil {
				t.Errorf("%s: link %s: %v", filepath.Base(page), target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !hasAnchor(t, path, anchor) {
				t.Errorf("%s: link %s: no heading %q in %s", filepath.Base(page), target, anchor, filepath.Base(path))
			}
		}
	}
}

// outsideCode drops fenced blocks, where ]( is code, not a link.
func outsideCode(text string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// hasAnchor reports whether a heading of the markdown file at path has the
// anchor GitHub gives it.
func hasAnchor(t *testing.T, path, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(outsideCode(string(text))) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if headingAnchor(title) == anchor {
			return true
		}
	}
	return false
}

// headingAnchor is GitHub's anchor for a heading: lower case, punctuation
// but - and _ dropped, spaces as -.
func headingAnchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
