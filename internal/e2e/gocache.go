package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// GoCache returns a Go build cache folder kept between test runs and shared
// by every test that builds Go code in the jail and is not about a cold
// build. Go's cache is content-addressed, so sharing it cannot change a
// result; it spares each such test a cold build of the standard library,
// 45-84 s on a busy two-core machine.
func GoCache(tb testing.TB) string {
	tb.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "hone-test", "jail-gocache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}
