package sandbox

import (
	"os"
	"path/filepath"
)

// BaseEnv is the scrubbed environment every command starts from: PATH and a
// C locale, HOME set to home, TMPDIR kept, and Go's caches pointed at the
// user's real ones (a fresh HOME would otherwise mean a cold build cache on
// every run; the caches are content-addressed, so sharing them cannot change
// a result). GOTOOLCHAIN=local, GOFLAGS=-mod=readonly and GOPROXY=off stop Go
// targets from downloading toolchains or modules; they are inert for others.
// Nothing else of hone's own environment (tokens, SSH agents, git settings)
// reaches the command.
func BaseEnv(home string) []string {
	env := []string{
		"PATH=" + getenv("PATH", "/usr/local/bin:/usr/bin:/bin"),
		"HOME=" + home,
		"LANG=C",
		"LC_ALL=C",
		"GOTOOLCHAIN=local",
		"GOFLAGS=-mod=readonly",
		"GOPROXY=off",
		"GOCACHE=" + goCache(),
		"GOPATH=" + goPath(),
	}
	for _, k := range []string{"TMPDIR", "GOROOT", "GOMODCACHE", "TERM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func goCache() string {
	if v := os.Getenv("GOCACHE"); v != "" {
		return v
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "go-build")
	}
	return "off"
}

func goPath() string {
	if v := os.Getenv("GOPATH"); v != "" {
		return v
	}
	if d, err := os.UserHomeDir(); err == nil {
		return filepath.Join(d, "go")
	}
	return filepath.Join(os.TempDir(), "go")
}
