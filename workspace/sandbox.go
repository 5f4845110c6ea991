package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// sandbox fills the [sandbox] defaults and checks what can be checked
// without the repository (checkReadOnly does the rest).
func (p *parser) sandbox(c *Config) error {
	s := &c.Sandbox
	switch s.Network {
	case "":
		s.Network = "deny"
	case "deny", "allow":
	default:
		return p.errf(keyPath{"sandbox", "network"}, "must be \"deny\" or \"allow\", not %q", s.Network)
	}
	switch s.Isolation {
	case "":
		s.Isolation = IsolationFull
	case IsolationFull, IsolationWeak:
	default:
		return p.errf(keyPath{"sandbox", "isolation"}, "must be \"full\" or \"weak\", not %q", s.Isolation)
	}
	if p.defined("sandbox", "require_isolation") {
		c.Warnings = append(c.Warnings, errs.Warning{Code: "deprecated_key", Message: fmt.Sprintf(
			"%s:%d: [sandbox] require_isolation is deprecated and changes nothing: verdicts need the full jail unless isolation = \"weak\"; remove the key",
			p.file, keyLine(p.data, keyPath{"sandbox", "require_isolation"}))})
	}
	for _, ro := range s.ReadOnly {
		if !filepath.IsAbs(ro) || filepath.Clean(ro) != ro || ro == "/" {
			return p.errf(keyPath{"sandbox", "read_only"}, "%q must be an absolute, clean path below /", ro)
		}
	}
	if s.CacheSize == "" {
		s.CacheSize = DefaultCacheSize
	}
	n, err := ParseSize(s.CacheSize)
	if err != nil {
		return p.errf(keyPath{"sandbox", "cache_size"}, "%v", err)
	}
	s.CacheBytes = n
	return nil
}

// checkReadOnly refuses a read_only path that would show a jail the
// repository's git directory or hone's state (inside them, or holding
// them), or the whole of the user's HOME, where keys live (a toolchain
// inside HOME is fine). Symlinks are resolved first.
func (w *Workspace) checkReadOnly() error {
	private := []string{w.GitDir, w.CommonDir, w.StatePath()}
	for i, p := range private {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			private[i] = real
		}
	}
	home, _ := os.UserHomeDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for _, ro := range w.Config.Sandbox.ReadOnly {
		real := ro
		if r, err := filepath.EvalSymlinks(ro); err == nil {
			real = r
		} else if !os.IsNotExist(err) {
			return errs.Wrap(errs.Failure, err, "cannot resolve [sandbox] read_only path %s", ro)
		}
		for _, p := range private {
			if within(real, p) || within(p, real) {
				return w.Config.Errorf([]string{"sandbox", "read_only"}, "%q would show jailed commands %s (the repository's git directory or hone's state); list only toolchain folders", ro, p)
			}
		}
		if home != "" && home != "/" && within(home, real) {
			return w.Config.Errorf([]string{"sandbox", "read_only"}, "%q would show jailed commands the whole of HOME (%s); list only toolchain folders", ro, home)
		}
	}
	return nil
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

var sizeUnits = map[string]int64{
	"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
}

// ParseSize reads a size such as "2GiB", "500MB" or "1048576" (bytes).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i:])
	mult, ok := sizeUnits[unit]
	n, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || n < 0 || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size; write it as e.g. \"2GiB\" or \"500MB\"", s)
	}
	return int64(n * float64(mult)), nil
}
