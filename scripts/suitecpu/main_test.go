package main

import (
	"encoding/binary"
	"strings"
	"testing"
)

// acct returns one acct v3 record as the kernel writes it.
func acct(pid, ppid int, comm string, utime, stime uint16) []byte {
	r := make([]byte, recordSize)
	r[1] = 3
	le := binary.LittleEndian
	le.PutUint32(r[16:], uint32(pid))
	le.PutUint32(r[20:], uint32(ppid))
	le.PutUint16(r[32:], utime)
	le.PutUint16(r[34:], stime)
	copy(r[48:], comm)
	return r
}

// Children exit before their parents; a pid used again later belongs to
// another process; the outermost *.test names the package, so a Go
// harness's bench.test under a jail counts for the package that ran it.
func TestProcessesCountForTheTestBinaryThatStartedThem(t *testing.T) {
	var b []byte
	for _, r := range [][]byte{
		acct(30, 20, "bench.test", 50, 2), // under the meter, 0.52 s
		acct(20, 11, "hone-jail-init", 1, 1),
		acct(11, 10, "hone", 3, 0),
		acct(10, 5, "gaming.test", 10, 0),
		acct(30, 6, "git", 0, 1), // pid 30 again, another parent
		acct(6, 1, "verdict.test", 2, 0),
		acct(5, 1, "go", 1<<13|100, 0), // 100 * 8 ticks
	} {
		b = append(b, r...)
	}
	rs, err := parse(b)
	if err != nil {
		t.Fatal(err)
	}
	got := packages(rs)
	want := []string{"gaming.test", "gaming.test", "gaming.test", "gaming.test", "verdict.test", "verdict.test", "(no test binary: go test's builds, scripts)"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("packages %v, want %v", got, want)
	}
	if rs[0].cpu != 0.52 || rs[6].cpu != 8 {
		t.Errorf("cpu %v and %v, want 0.52 and 8", rs[0].cpu, rs[6].cpu)
	}
	var out strings.Builder
	report(&out, rs)
	if !strings.Contains(out.String(), "7 processes") || !strings.Contains(out.String(), "bench.test 1/1") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestNotAnAcctFileIsAnError(t *testing.T) {
	if _, err := parse([]byte("hello")); err == nil {
		t.Error("5 bytes parsed")
	}
	r := acct(1, 0, "x", 0, 0)
	r[1] = 2
	if _, err := parse(r); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("version 2: %v", err)
	}
}
