package refdoc

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const runLong = `Run the target once and report.
A second line of the first paragraph.

Modes:
  fast   skip the checks
  slow   run every check

.hidden files are skipped; a path like C:\temp\x is read as is.
'quoted' lines stay text, and <git dir>/x stays visible.

EXIT STATUS
  0   success
  1   the run failed
  10  with --exit-code: not accepted`

// testTree is a small CLI with what the generators must handle: persistent
// and local flags, shorthands, defaults, a hidden flag, a hidden command, a
// nested subcommand, an example and a Long text with paragraphs, an indented
// block, roff control characters and an EXIT STATUS section.
func testTree() *cobra.Command {
	noop := func(*cobra.Command, []string) error { return nil }
	root := &cobra.Command{Use: "app", Short: "An example tool", Long: "app does things.\n\nIt does them well."}
	root.PersistentFlags().StringP("config", "c", "app.toml", "read the configuration from `FILE`")

	run := &cobra.Command{Use: "run TARGET", Short: "Run a target", Long: runLong, RunE: noop,
		Example: "  app run fast\n  app run --count 2 slow"}
	run.Flags().IntP("count", "n", 3, "run `N` times")
	run.Flags().String("mode", "", "the mode")
	run.Flags().Duration("timeout", 30*time.Second, "give up after this long")
	run.Flags().Bool("json", false, "print JSON")
	run.Flags().Bool("debug-internal", false, "not for users")
	if err := run.Flags().MarkHidden("debug-internal"); err != nil {
		panic(err)
	}
	run.AddCommand(&cobra.Command{Use: "all", Short: "Run every target", RunE: noop})

	root.AddCommand(run,
		&cobra.Command{Use: "secret", Short: "Not documented", Hidden: true, RunE: noop},
		&cobra.Command{Use: "version", Short: "Print the version", RunE: noop})
	return root
}

var header = ManHeader{Source: "app 1.0", Manual: "app manual"}

func TestGenerators(t *testing.T) {
	tests := []struct {
		name  string
		gen   func(root *cobra.Command, dir string) ([]string, error)
		files []string
	}{
		{
			name:  "man pages named with dashes and the section",
			gen:   func(root *cobra.Command, dir string) ([]string, error) { return Man(root, dir, header) },
			files: []string{"app.1", "app-run.1", "app-run-all.1", "app-version.1"},
		},
		{
			name: "man pages in another section",
			gen: func(root *cobra.Command, dir string) ([]string, error) {
				return Man(root, dir, ManHeader{Section: "8"})
			},
			files: []string{"app.8", "app-run.8", "app-run-all.8", "app-version.8"},
		},
		{
			name:  "markdown pages named with underscores",
			gen:   Markdown,
			files: []string{"app.md", "app_run.md", "app_run_all.md", "app_version.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := tt.gen(testTree(), dir)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range tt.files {
				want = append(want, filepath.Join(dir, f))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("returned files\n got %q\nwant %q", got, want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var written []string
			for _, e := range entries {
				written = append(written, filepath.Join(dir, e.Name()))
			}
			if !slices.Equal(written, slices.Sorted(slices.Values(want))) {
				t.Fatalf("files in %s: %q, want only the returned ones", dir, written)
			}

			first := readAll(t, got)
			for _, s := range []string{"secret", "Not documented", "debug-internal", `debug\-internal`, "Auto generated"} {
				for f, data := range first {
					if bytes.Contains(data, []byte(s)) {
						t.Errorf("%s mentions %q, which is hidden", f, s)
					}
				}
			}

			again, err := tt.gen(testTree(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for f, data := range readAll(t, again) {
				if !bytes.Equal(data, first[f]) {
					t.Errorf("%s changed when regenerated for the same commands", f)
				}
			}
		})
	}
}

func TestManPage(t *testing.T) {
	dir := t.TempDir()
	if _, err := Man(testTree(), dir, header); err != nil {
		t.Fatal(err)
	}
	page := string(readFile(t, filepath.Join(dir, "app-run.1")))
	golden(t, "app-run.1", page)
	for _, want := range []string{
		`.TH "APP\-RUN" "1" "" "app 1.0" "app manual"` + "\n",
		".SH NAME\napp\\-run \\- Run a target\n",
		".SH SYNOPSIS\n\\fBapp run\\fP TARGET [flags]\n",
		".SH DESCRIPTION\nRun the target once and report.\n",
		".PP\nModes:\n.nf\n  fast   skip the checks\n",
		"\n\\&.hidden files are skipped; a path like C:\\etemp\\ex is read as is.\n",
		"\n\\&'quoted' lines stay text",
		".SH OPTIONS\n",
		".TP\n\\fB\\-n\\fP, \\fB\\-\\-count\\fP \\fIN\\fP\nrun N times (default 3)\n",
		".TP\n\\fB\\-\\-mode\\fP \\fIstring\\fP\nthe mode\n",
		".TP\n\\fB\\-\\-timeout\\fP \\fIduration\\fP\ngive up after this long (default 30s)\n",
		".TP\n\\fB\\-\\-json\\fP\nprint JSON\n",
		".SH \"OPTIONS INHERITED FROM PARENT COMMANDS\"\n.TP\n\\fB\\-c\\fP, \\fB\\-\\-config\\fP \\fIFILE\\fP\nread the configuration from FILE (default \"app.toml\")\n",
		".SH \"EXIT STATUS\"\n",
		".SH EXAMPLE\n.nf\n  app run fast\n",
		".SH SEE ALSO\n\\fBapp(1)\\fP,\n\\fBapp\\-run\\-all(1)\\fP\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("app-run.1 lacks %q", want)
		}
	}
	if root := string(readFile(t, filepath.Join(dir, "app.1"))); !strings.HasPrefix(root, `.TH "APP" "1"`) {
		t.Errorf("app.1 starts %q, want the title APP", strings.SplitN(root, "\n", 2)[0])
	}
}

// TestManGroff checks the pages with the formatter man uses: groff must
// accept them without a warning and show the help text as written. Without
// groff it fails (CI installs it), unless -short.
func TestManGroff(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the check of the man pages with groff")
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Fatal("groff is not installed: the man pages' check needs it; run scripts/ci-deps.sh (or apt-get install groff-base), or go test -short to skip it")
	}
	dir := t.TempDir()
	files, err := Man(testTree(), dir, header)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		var stderr bytes.Buffer
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", f)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff -ww %s: %v\n%s", filepath.Base(f), err, stderr.Bytes())
		}
	}

	// -P-cbou: plain text, no bold, underline or escape sequences.
	out, err := exec.Command(groff, "-man", "-Tutf8", "-P-cbou", filepath.Join(dir, "app-run.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^\s+app run TARGET \[flags\]$`,
		`(?m)^\s+Modes:\n\s+fast   skip the checks\n\s+slow   run every check$`,
		`\.hidden files are skipped; a path like C:\\temp\\x is read as is\.`,
		`'quoted' lines stay text`,
		`(?m)^EXIT STATUS\n\s+0   success\n\s+1   the run failed\n\s+10  with --exit-code: not accepted$`,
		`(?m)^\s+-n, --count N\n\s+run N times \(default 3\)$`,
		`(?m)^\s+app\(1\), app-run-all\(1\)$`,
	} {
		if !regexp.MustCompile(want).Match(out) {
			t.Errorf("groff's rendering of app-run.1 does not match %s:\n%s", want, out)
		}
	}
}

func TestMarkdownPage(t *testing.T) {
	dir := t.TempDir()
	if _, err := Markdown(testTree(), dir); err != nil {
		t.Fatal(err)
	}
	page := string(readFile(t, filepath.Join(dir, "app_run.md")))
	golden(t, "app_run.md", page)
	for _, want := range []string{
		"## app run\n\nRun a target\n\n### Synopsis\n\nRun the target once and report.\n",
		"Modes:\n\n```\n  fast   skip the checks\n  slow   run every check\n```\n",
		`a path like C:\temp\x is read as is.`,
		`\<git dir>/x stays visible`,
		"```\napp run TARGET [flags]\n```\n",
		"### Examples\n\n```\n  app run fast\n  app run --count 2 slow\n```\n",
		"### Options\n\n```\n  -n, --count N",
		"### Options inherited from parent commands\n\n```\n  -c, --config FILE",
		"### EXIT STATUS\n\n```\n  0   success\n",
		"### SEE ALSO\n\n* [app](app.md)\t - An example tool\n* [app run all](app_run_all.md)\t - Run every target\n",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("app_run.md lacks %q", want)
		}
	}
}

func TestParseDoc(t *testing.T) {
	tests := []struct {
		name string
		text string
		want doc
	}{
		{
			name: "paragraphs split at blank lines",
			text: "one\ntwo\n\nthree",
			want: doc{description: []block{{kind: prose, lines: []string{"one", "two"}}, {kind: prose, lines: []string{"three"}}}},
		},
		{
			name: "indented lines under their introduction",
			text: "Modes:\n  a  x\n\tb  y\nafter",
			want: doc{description: []block{
				{kind: prose, lines: []string{"Modes:"}},
				{kind: verbatim, lines: []string{"  a  x", "\tb  y"}, joined: true},
				{kind: prose, lines: []string{"after"}, joined: true},
			}},
		},
		{
			name: "an upper-case paragraph starts a section",
			text: "intro\n\nEXIT STATUS\n  0   success\n\nSEE THIS\nmore",
			want: doc{
				description: []block{{kind: prose, lines: []string{"intro"}}},
				sections: []section{
					{title: "EXIT STATUS", blocks: []block{{kind: verbatim, lines: []string{"  0   success"}}}},
					{title: "SEE THIS", blocks: []block{{kind: prose, lines: []string{"more"}}}},
				},
			},
		},
		{
			name: "an upper-case line inside a paragraph is text",
			text: "intro\nEXIT STATUS",
			want: doc{description: []block{{kind: prose, lines: []string{"intro", "EXIT STATUS"}}}},
		},
		{
			name: "a markdown heading standing alone",
			text: "#### Linux:\n\n\tcmd",
			want: doc{description: []block{{kind: heading, lines: []string{"Linux:"}}, {kind: verbatim, lines: []string{"\tcmd"}}}},
		},
		{
			name: "trailing spaces dropped",
			text: "a  \n  \nb",
			want: doc{description: []block{{kind: prose, lines: []string{"a"}}, {kind: prose, lines: []string{"b"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseDoc(tt.text)
			if !docEqual(got, tt.want) {
				t.Errorf("parseDoc(%q)\n got %+v\nwant %+v", tt.text, got, tt.want)
			}
		})
	}
}

func TestRoffText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"backslash", `C:\x`, `C:\ex`},
		{"hyphens", "--count -n a-b", `\-\-count \-n a\-b`},
		{"leading dot", ".git is skipped", `\&.git is skipped`},
		{"leading quote", "'x' is", `\&'x' is`},
		{"leading dot on a later line", "a\n.b", "a\n\\&.b"},
		{"dot inside a line", "a .b", "a .b"},
		{"non-ASCII", "naïve", `na\[u00EF]ve`},
		{"control characters dropped, tab kept", "a\x07b\tc", "ab\tc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := text(tt.in); got != tt.want {
				t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got, want := quoted(`say "hi"`), `"say \(dqhi\(dq"`; got != want {
		t.Errorf("quoted = %q, want %q", got, want)
	}
}

func TestMarkdownText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"placeholder", "<git dir>/x", `\<git dir>/x`},
		{"inside a code span", "run `a <b`", "run `a <b`"},
		{"after a code span", "`a` <b>", "`a` \\<b>"},
		{"after an unmatched backtick", "`a` ` <b>", "`a` ` \\<b>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := markdownText(tt.in); got != tt.want {
				t.Errorf("markdownText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func docEqual(a, b doc) bool {
	blocksEqual := func(x, y []block) bool {
		return slices.EqualFunc(x, y, func(p, q block) bool {
			return p.kind == q.kind && p.joined == q.joined && slices.Equal(p.lines, q.lines)
		})
	}
	return blocksEqual(a.description, b.description) &&
		slices.EqualFunc(a.sections, b.sections, func(p, q section) bool {
			return p.title == q.title && blocksEqual(p.blocks, q.blocks)
		})
}

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := string(readFile(t, path)); got != want {
		t.Errorf("%s differs from %s (go test -update to accept):\n%s", name, path, got)
	}
}

func readAll(t *testing.T, files []string) map[string][]byte {
	t.Helper()
	m := make(map[string][]byte)
	for _, f := range files {
		m[f] = readFile(t, f)
	}
	return m
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
