package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// A gate that lists the module cache into its log (which the ledger keeps
// and pushes) sees, for a C target, nothing; for a Go target, only hone's
// own cache: never what the host user's GOMODCACHE holds.
func TestGateCannotListTheUsersModuleCache(t *testing.T) {
	tier.Jail(t)
	if _, err := lookGo(); err != nil {
		t.Skip("no go command")
	}
	users := t.TempDir()
	secret := filepath.Join(users, "cache", "download", "example.com", "private-user-module")
	if err := os.MkdirAll(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMODCACHE", users)
	for _, tc := range []struct {
		name, toml string
		files      map[string]string
	}{
		{"a C target", cTarget, cFiles},
		{"a Go target", "[targets.t]\nbuild = \"go build -o $HONE_OUT/prog .\"\n", map[string]string{
			"targets/t/go.mod":  "module example.com/t\n\ngo 1.22\n",
			"targets/t/main.go": "package main\n\nfunc main() {}\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name == "a Go target" {
				t.Skip("-short: a Go build in the jail")
			}
			f := newFixture(t, tc.files, tc.toml)
			if tc.name == "a Go target" {
				f.warmGo() // the subject is the module cache, not a cold build
			}
			s := f.build(f.start(false), Candidate, f.pin)
			if !s.OK() {
				t.Fatal(s.Describe())
			}
			out, res := run(t, s, "ls -R "+goModDir+" 2>&1; echo GOMODCACHE=$GOMODCACHE")
			if strings.Contains(out, "private-user-module") || !strings.Contains(out, "GOMODCACHE="+goModDir) {
				t.Errorf("the jail sees the user's module cache:\n%s%s", out, res.Stderr.Bytes())
			}
		})
	}
}
