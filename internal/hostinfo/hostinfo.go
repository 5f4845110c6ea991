// Package hostinfo reads the facts about this machine that profile and verdict
// entries record, so two entries from one host fingerprint it the same way.
package hostinfo

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Kernel is the running kernel's release, or "" when uname fails.
func Kernel() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// CPUModel is the first "model name" of /proc/cpuinfo, or the architecture
// where the kernel does not say.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// LoadAvg is the 1, 5 and 15 minute load averages as the kernel prints them,
// or "" where /proc/loadavg cannot be read.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
