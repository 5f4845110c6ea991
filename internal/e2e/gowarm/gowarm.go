// Package gowarm gives the end-to-end tests that judge Go targets, and are
// not about a cold build, a trusted Go build cache that already holds the
// standard library, so that each such test's first baseline build does not
// compile it again (45-84 s of CPU on a busy two-core machine).
//
// The cache is filled the way hone fills any repository's: by one
// baseline build, in the jail, of a module this package writes (one file
// that imports the standard packages the suites' targets use, and nothing
// else). It is kept between test runs, one per Go version, and seeded into
// a test repository's state directory before its first verdict. No test's
// own pin or candidate ever writes it, so a candidate reads only what a
// baseline of this package's module built; and since the pins' own
// packages are never in it, a pin's first build still compiles them,
// as a candidate's does.
//
// It is for tests only, in a package of its own because it imports build,
// whose own tests the lighter internal/e2e serves.
package gowarm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/lock"
	"github.com/hone-perf/hone/workspace"
)

// trustedDir is where hone keeps a repository's trusted Go build cache for
// the full jail, under the common git directory (repo.StatePath's "hone").
var trustedDir = filepath.Join("hone", build.GoCacheName(workspace.IsolationFull))

// module is the warm-up target: the standard packages that go test -c of
// the suites' Go targets (e2e/harness's module, go-humanize, cmd/hone's
// verdict_harness) compile, imported by a package with one test.
var module = map[string]string{
	"w/go.mod": "module example.com/warm\n\ngo 1.21\n",
	"w/warm.go": `// Package warm imports what the suites' Go targets build on.
package warm

import (
	_ "bytes"
	_ "errors"
	_ "flag"
	_ "fmt"
	_ "math"
	_ "math/big"
	_ "os"
	_ "regexp"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "time"
	_ "unicode/utf8"
)
`,
	"w/warm_test.go": "package warm\n\nimport (\n\t\"testing\"\n\t_ \"testing/quick\"\n)\n\nfunc TestNothing(t *testing.T) {}\n\nfunc BenchmarkNothing(b *testing.B) {}\n",
}

// config builds the module as the suites build theirs.
func config(goroot string) string {
	ro := ""
	if !strings.HasPrefix(goroot, "/usr/") {
		ro = fmt.Sprintf("[sandbox]\nread_only = [%q]\n\n", goroot)
	}
	return ro + `[targets.w]
path  = "w"
build = "PATH=` + goroot + `/bin:$PATH go test -c -o $HONE_OUT/bench.test ."
`
}

var (
	once   sync.Once
	shared string
	err    error
)

// Seed fills the trusted Go build cache of the repository whose common git
// directory is gitDir with the warm standard library, making that cache
// once per machine and Go version if no test made it yet. Files are hard
// links where they can be: hone replaces cache files, never rewrites them.
func Seed(gitDir string) error {
	once.Do(func() { shared, err = warm() })
	if err != nil {
		return err
	}
	return link(shared, filepath.Join(gitDir, trustedDir))
}

// SeedT is Seed for a test, which it fails on an error.
func SeedT(tb testing.TB, gitDir string) {
	tb.Helper()
	if err := Seed(gitDir); err != nil {
		tb.Fatalf("warming the jail's Go build cache: %v", err)
	}
}

// warm returns the shared cache's folder, making it first under a lock, so
// that test packages running side by side make it once.
func warm() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 2 {
		return "", fmt.Errorf("go env GOROOT GOVERSION: %v %q", err, out)
	}
	goroot, version := f[0], f[1]
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "hone-test", "jail-trusted-gocache", version+"-"+moduleHash())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	held, err := lock.AcquireLong(ctx, dir+".lock", "warm the jail's Go build cache", nil)
	if err != nil {
		return "", err
	}
	defer held.Release()
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "make-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	trusted, err := buildModule(ctx, tmp, goroot)
	if err != nil {
		return "", err
	}
	if err := os.Rename(trusted, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// moduleHash names the module's content, so that a cache kept from an
// older module (one that imported less) is never taken for this one's.
func moduleHash() string {
	names := make([]string, 0, len(module))
	for name := range module {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s\x00%s\x00", name, module[name])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// buildModule writes the warm-up module into a repository in tmp and builds
// its pin as a verdict's baseline, which fills the repository's trusted
// cache; it returns that cache's folder.
func buildModule(ctx context.Context, tmp, goroot string) (string, error) {
	files := map[string]string{"hone.toml": config(goroot)}
	for k, v := range module {
		files[k] = v
	}
	for name, content := range files {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "warm"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
			"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ws, err := BuildPin(ctx, tmp, "w", "HEAD")
	if err != nil {
		return "", fmt.Errorf("the warm-up module: %w", err)
	}
	return ws.Repo.StatePath(build.GoCacheName(workspace.IsolationFull)), nil
}

// BuildPin builds target's pin (ref) in the workspace at dir, in process,
// as a verdict's baseline: the build lands in the repository's build cache
// and fills its trusted Go cache, so verdicts run after it find both warm.
func BuildPin(ctx context.Context, dir, target, ref string) (*workspace.Workspace, error) {
	ws, err := workspace.Open(dir)
	if err != nil {
		return nil, err
	}
	t, err := ws.Target(target)
	if err != nil {
		return nil, err
	}
	pin, err := ws.Repo.ResolveCommit(ctx, ref)
	if err != nil {
		return nil, err
	}
	run, err := build.Start(ctx, ws.Repo, t, ws.Config.Sandbox, "pin", false)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	s, err := run.Build(ctx, build.Baseline, pin)
	if err != nil {
		return nil, err
	}
	if !s.OK() {
		return nil, fmt.Errorf("the pin does not build: %s", s.Describe())
	}
	return ws, nil
}

// link makes every file of src a file of dst, as a hard link or else a
// copy, leaving files dst holds already.
func link(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if _, err := os.Lstat(to); err == nil {
			return nil
		}
		if os.Link(p, to) == nil {
			return nil
		}
		return copyFile(p, to)
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
