package jail

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
)

// Defaults for zero Limits fields.
const (
	DefaultCPU      = time.Hour
	DefaultFileSize = 4 << 30
	DefaultData     = 16 << 30
	DefaultProcs    = 512
	DefaultScratch  = 1 << 30
	DefaultShm      = 64 << 20
	openFiles       = 65536
)

// meterDir is where the jail keeps what belongs to the meter: its binary and
// the read-only sources of Copy mounts.
const meterDir = "/.hone"

// The jail builds these paths itself, so nothing may be mounted on or under
// them. The system directories are already visible read-only: a read-only
// path there needs no mount of its own.
var (
	systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	builtDirs  = []string{"/etc", "/dev", "/proc", meterDir}
)

// normalize fills in defaults and checks everything a caller could get
// wrong, before anything is started.
func (s Spec) normalize() (Spec, error) {
	if strings.TrimSpace(s.Command) == "" {
		return s, errs.Invalidf("jail: the command is empty")
	}
	switch s.Network {
	case "":
		s.Network = "deny"
	case "deny", "allow":
	default:
		return s, errs.Invalidf("jail: network %q is not \"deny\" or \"allow\"", s.Network)
	}
	switch s.Isolation {
	case "":
		s.Isolation = "full"
	case "full", "weak":
	default:
		return s, errs.Invalidf("jail: isolation %q is not \"full\" or \"weak\"", s.Isolation)
	}
	if s.Dir == "" {
		s.Dir = jailHome
	}
	if err := jailPath("working directory", s.Dir, false); err != nil {
		return s, err
	}
	for _, p := range s.Path {
		if err := jailPath("PATH entry", p, false); err != nil {
			return s, err
		}
	}
	for _, kv := range s.Env {
		if !strings.Contains(kv, "=") || strings.HasPrefix(kv, "=") {
			return s, errs.Invalidf("jail: environment entry %.40q is not KEY=VALUE", kv)
		}
	}
	seen := map[string]bool{}
	for _, m := range s.Mounts {
		if m.Mode < ReadOnly || m.Mode > Copy {
			return s, errs.Invalidf("jail: mount %s has an unknown mode", m.Jail)
		}
		if err := hostPath(m.Host); err != nil {
			return s, err
		}
		if err := jailPath("mount", m.Jail, true); err != nil {
			return s, err
		}
		if seen[m.Jail] {
			return s, errs.Invalidf("jail: two mounts at %s", m.Jail)
		}
		seen[m.Jail] = true
	}
	var ro []string
	for _, p := range s.ReadOnly {
		if err := hostPath(p); err != nil {
			return s, err
		}
		if under(p, systemDirs) != "" {
			continue
		}
		if err := jailPath("read-only path", p, true); err != nil {
			return s, err
		}
		ro = append(ro, p)
	}
	s.ReadOnly = ro
	s.Limits = s.Limits.withDefaults()
	if s.OutputCap <= 0 {
		s.OutputCap = DefaultOutputCap
	}
	return s, nil
}

func (l Limits) withDefaults() Limits {
	if l.CPU == 0 {
		l.CPU = DefaultCPU
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSize
	}
	if l.Data == 0 {
		l.Data = DefaultData
	}
	if l.Procs == 0 {
		l.Procs = DefaultProcs
	}
	if l.Scratch == 0 {
		l.Scratch = DefaultScratch
	}
	if l.Shm == 0 {
		l.Shm = DefaultShm
	}
	return l
}

// rlimits converts the limits for the meter. RLIMIT_CPU counts whole
// seconds, rounded up.
func (l Limits) rlimits() rlimits {
	cpu := int64(NoLimit)
	if l.CPU > 0 {
		cpu = int64((l.CPU + time.Second - 1) / time.Second)
	}
	return rlimits{CPU: cpu, FSize: l.FileSize, Data: l.Data, NProc: l.Procs, NoFile: openFiles}
}

func jailPath(what, p string, mount bool) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return errs.Invalidf("jail: %s %.80q is not an absolute, clean path", what, p)
	}
	if !mount {
		return nil
	}
	if p == "/" {
		return errs.Invalidf("jail: a %s cannot cover the jail's root", what)
	}
	if r := under(p, append(systemDirs, builtDirs...)); r != "" {
		return errs.Invalidf("jail: %s %.80q is inside %s, which the jail builds itself", what, p, r)
	}
	return nil
}

// Visible reports whether every jail sees the host path p without a mount:
// it is inside a system directory, bound read-only. A toolchain anywhere
// else must be listed in Spec.ReadOnly.
func Visible(p string) bool { return under(filepath.Clean(p), systemDirs) != "" }

// under returns the first of dirs that p is or is inside, or "".
func under(p string, dirs []string) string {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

func hostPath(p string) error {
	if !filepath.IsAbs(p) {
		return errs.Invalidf("jail: host path %.80q is not absolute", p)
	}
	return nil
}

// short bounds a command quoted in a message.
func short(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
