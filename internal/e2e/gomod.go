package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// FetchModule downloads a module (path@version) through the Go module
// proxy into the module cache and returns its folder there, read only:
// the end-to-end tests that judge a real library fetch it at test time,
// never keeping its code in hone's repository.
func FetchModule(tb testing.TB, mod string) string {
	tb.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	cmd.Dir = tb.TempDir()
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Dir == "" {
		tb.Fatalf("fetching %s through the Go module proxy: %v %s", mod, err, info.Error)
	}
	return info.Dir
}

// CopyModule copies the regular files of a module cache folder into dst,
// writable.
func CopyModule(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}
