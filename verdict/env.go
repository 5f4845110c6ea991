package verdict

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/hostinfo"
)

// hostFacts fills the machine part of the fingerprint: host, kernel, CPU,
// load and tool versions.
func hostFacts(ctx context.Context, e *Environment) {
	e.Host, _ = os.Hostname()
	e.Kernel = hostinfo.Kernel()
	e.CPUModel = hostinfo.CPUModel()
	e.CPUs = runtime.NumCPU()
	e.LoadAvg = hostinfo.LoadAvg()
	e.Tools = map[string]string{}
	if v, err := git.Output(ctx, "", "--version"); err == nil {
		e.Tools["git"] = v
	}
	for tool, args := range map[string][]string{
		"cc": {"--version"}, "go": {"version"}, "perf": {"--version"}, "valgrind": {"--version"},
	} {
		if v := toolVersion(ctx, tool, args...); v != "" {
			e.Tools[tool] = v
		}
	}
}

func toolVersion(ctx context.Context, tool string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, tool, args...).Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line
}

// maxHashedFiles bounds the binary fingerprint of one HONE_OUT.
const maxHashedFiles = 64

// hashOutputs returns sha256 of the regular files in a build output folder,
// by path relative to it.
func hashOutputs(dir string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= maxHashedFiles {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = hex.EncodeToString(h.Sum(nil))
		}
		return nil
	})
	if len(out) == 0 {
		return nil
	}
	return out
}
