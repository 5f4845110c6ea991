package jail

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/tier"
)

// A run asked to use one CPU starts on the last CPU hone may use, and
// every process it forks inherits that; a run not asked keeps hone's
// whole set. Go reads the set when it starts, so a Go program there runs
// with GOMAXPROCS 1 and its garbage collector finds no idle core to work on.
func TestOneCPUStartsTheCommandOnTheLastCPU(t *testing.T) {
	tier.Jail(t)
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	last := -1
	var all []string
	for cpu := range 8 * int(unsafe.Sizeof(own)) {
		if own.IsSet(cpu) {
			last = cpu
			all = append(all, strconv.Itoa(cpu))
		}
	}
	for _, isolation := range []string{"full", "weak"} {
		for _, one := range []bool{true, false} {
			// The shell forks cat: what the command's children get, not
			// only the command itself.
			res := run(t, Spec{Command: "cat /proc/self/status; true", Isolation: isolation, OneCPU: one})
			got := allowed(t, string(res.Stdout.Bytes()))
			want := all
			if one {
				want = []string{strconv.Itoa(last)}
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("%s, one CPU %v: the command may run on CPUs %v, want %v", isolation, one, got, want)
			}
		}
	}
}

// allowed reads the CPUs of a Cpus_allowed_list line ("0-1,3").
func allowed(t *testing.T, status string) []string {
	t.Helper()
	for _, line := range strings.Split(status, "\n") {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		var out []string
		for _, r := range strings.Split(strings.TrimSpace(list), ",") {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				t.Fatalf("Cpus_allowed_list %q", list)
			}
			for c := a; c <= b; c++ {
				out = append(out, strconv.Itoa(c))
			}
		}
		return out
	}
	t.Fatalf("no Cpus_allowed_list in\n%s", status)
	return nil
}
