package playbooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

func TestBuiltins(t *testing.T) {
	list, err := List("")
	if err != nil {
		t.Fatal(err)
	}
	wantNames := []string{"Build configuration", "Allocator", "Allocation churn", "Data layout", "Algorithmic", "SIMD and vectorization", "Concurrency"}
	if len(list) != Count {
		t.Fatalf("List returned %d playbooks, want %d", len(list), Count)
	}
	for i, p := range list {
		if p.Number != i+1 || p.Name != wantNames[i] || p.Source != Builtin {
			t.Errorf("playbook %d = %d %q %q", i+1, p.Number, p.Name, p.Source)
		}
		if p.Summary == "" || strings.Contains(p.Summary, "\n") {
			t.Errorf("playbook %d: summary %q is not one line", p.Number, p.Summary)
		}
		// Substantive and concrete for each language the targets use.
		if n := strings.Count(p.Markdown, "\n"); n < 60 || n > 130 {
			t.Errorf("playbook %d has %d lines, want 60-130", p.Number, n)
		}
		for _, lang := range []string{"C++", "Rust", "Go"} {
			if !strings.Contains(p.Markdown, lang) {
				t.Errorf("playbook %d never mentions %s", p.Number, lang)
			}
		}
		// Sections in the documented order.
		last := -1
		for _, s := range Sections {
			at := strings.Index(p.Markdown, "\n## "+s+"\n")
			if at < last {
				t.Errorf("playbook %d: section %q missing or out of order", p.Number, s)
			}
			last = at
		}
	}
}

func TestGetOutOfRange(t *testing.T) {
	for _, n := range []int{0, 8, -1} {
		_, err := Get("", n)
		if errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "1 to 7") {
			t.Errorf("Get(%d) err = %v, want NotFound naming 1 to 7", n, err)
		}
	}
}

func TestWorkspaceOverride(t *testing.T) {
	const custom = "# 3. Our churn rules\n\nHouse rules for allocation churn.\n\n## Preconditions\nx\n## Procedure\nx\n## Verification\nx\n## Known failure modes\nx\n"
	tests := []struct {
		name    string
		files   map[string]string
		code    errs.Code // 0: success
		source  string    // for success: "builtin" or the file name
		summary string
	}{
		{"no playbooks dir", nil, 0, Builtin, ""},
		{"replaces class 3", map[string]string{"03-churn.md": custom}, 0, "03-churn.md", "House rules for allocation churn."},
		{"other class untouched", map[string]string{"04-layout.md": strings.Replace(custom, "# 3.", "# 4.", 1)}, 0, Builtin, ""},
		{"single digit name ignored", map[string]string{"3-churn.md": custom}, 0, Builtin, ""},
		{"two files for one class", map[string]string{"03-a.md": custom, "03-b.md": custom}, errs.Invalid, "", ""},
		{"missing section", map[string]string{"03-churn.md": strings.Replace(custom, "## Verification", "## Checks", 1)}, errs.Invalid, "", ""},
		{"missing title", map[string]string{"03-churn.md": "no title\n"}, errs.Invalid, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tt.files {
				p := filepath.Join(root, "playbooks", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Get(root, 3)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("err = %v, want code %d", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(p.Source) != tt.source {
				t.Errorf("Source = %q, want %q", p.Source, tt.source)
			}
			if tt.summary != "" && (p.Summary != tt.summary || p.Name != "Our churn rules") {
				t.Errorf("got %q / %q", p.Name, p.Summary)
			}
			if _, err := List(root); err != nil {
				t.Errorf("List: %v", err)
			}
		})
	}
}
