// Command suitecpu reads a BSD process accounting file (acct v3, written
// while the suite ran; see scripts/suite-cpu.sh) and prints who spent the
// CPU: each test package (the outermost *.test process above a process),
// with its processes and its costliest commands, then every command.
//
// The kernel records a process when it exits, in ticks of 10 ms, so a
// process that lives a few milliseconds may count as none: the totals
// undercount short processes (git, sh, the jail's start-up), while the
// process counts are exact.
//
//	go run ./scripts/suitecpu /tmp/pacct
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// record is one acct_v3 entry (linux/acct.h), 64 bytes.
type record struct {
	pid, ppid int
	comm      string
	cpu       float64 // user + system, seconds
	minflt    float64
}

const recordSize = 64

// comp is the kernel's comp_t: a 13-bit mantissa and a base-8 exponent.
func comp(v uint16) float64 { return float64(v&0x1fff) * math.Pow(8, float64(v>>13)) }

// parse reads every record; a file that is not acct v3 is an error.
func parse(b []byte) ([]record, error) {
	if len(b)%recordSize != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte acct records", len(b), recordSize)
	}
	var rs []record
	le := binary.LittleEndian
	for off := 0; off < len(b); off += recordSize {
		r := b[off : off+recordSize]
		if r[1] != 3 {
			return nil, fmt.Errorf("record %d is acct version %d, want 3 (CONFIG_BSD_PROCESS_ACCT_V3)", off/recordSize, r[1])
		}
		comm, _, _ := strings.Cut(string(r[48:64]), "\x00")
		rs = append(rs, record{
			pid:    int(le.Uint32(r[16:])),
			ppid:   int(le.Uint32(r[20:])),
			comm:   comm,
			cpu:    (comp(le.Uint16(r[32:])) + comp(le.Uint16(r[34:]))) / 100,
			minflt: comp(le.Uint16(r[42:])),
		})
	}
	return rs, nil
}

// packages names each record's test package: the outermost *.test process
// among its ancestors (or itself). A parent exits after its children, so a
// record's parent is the next record with the parent's pid; pids are
// reused, so an earlier one cannot be. A parent is always a later record,
// so the walk up ends.
func packages(rs []record) []string {
	next := map[int]int{} // pid -> index of the nearest later record with it
	parent := make([]int, len(rs))
	for i := len(rs) - 1; i >= 0; i-- {
		p, ok := next[rs[i].ppid]
		if !ok {
			p = -1
		}
		parent[i] = p
		next[rs[i].pid] = i
	}
	out := make([]string, len(rs))
	for i := range rs {
		name := ""
		for j := i; j >= 0; j = parent[j] {
			if strings.HasSuffix(rs[j].comm, ".test") {
				name = rs[j].comm
			}
		}
		if name == "" {
			name = "(no test binary: go test's builds, scripts)"
		}
		out[i] = name
	}
	return out
}

type tally struct {
	n           int
	cpu, minflt float64
	by          map[string]*tally
}

func (t *tally) add(r record, sub string) {
	t.n++
	t.cpu += r.cpu
	t.minflt += r.minflt
	if sub == "" {
		return
	}
	if t.by == nil {
		t.by = map[string]*tally{}
	}
	of(t.by, sub).add(r, "")
}

// of returns m's tally for key, made on first use.
func of(m map[string]*tally, key string) *tally {
	if m[key] == nil {
		m[key] = &tally{}
	}
	return m[key]
}

func sorted(m map[string]*tally) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]].cpu != m[keys[j]].cpu {
			return m[keys[i]].cpu > m[keys[j]].cpu
		}
		return keys[i] < keys[j]
	})
	return keys
}

func report(w io.Writer, rs []record) {
	pkgs, cmds, total := map[string]*tally{}, map[string]*tally{}, &tally{}
	for i, name := range packages(rs) {
		of(pkgs, name).add(rs[i], rs[i].comm)
		of(cmds, rs[i].comm).add(rs[i], "")
		total.add(rs[i], "")
	}
	fmt.Fprintf(w, "%d processes, %.0f s of CPU recorded, %.1fM minor faults\n\nby test package (processes, CPU s; its costliest commands as count/CPU s):\n", total.n, total.cpu, total.minflt/1e6)
	for _, name := range sorted(pkgs) {
		t := pkgs[name]
		var top []string
		for i, c := range sorted(t.by) {
			if i == 6 {
				break
			}
			top = append(top, fmt.Sprintf("%s %d/%.0f", c, t.by[c].n, t.by[c].cpu))
		}
		fmt.Fprintf(w, "  %-44s %7d %7.1f  %s\n", name, t.n, t.cpu, strings.Join(top, ", "))
	}
	fmt.Fprintf(w, "\nby command (processes, CPU s):\n")
	for i, c := range sorted(cmds) {
		if i == 25 {
			break
		}
		fmt.Fprintf(w, "  %-16s %7d %7.1f\n", c, cmds[c].n, cmds[c].cpu)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: suitecpu ACCT-FILE (written by accton; see scripts/suite-cpu.sh)")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err == nil && len(b) == 0 {
		err = errors.New("no records: was accounting on (accton FILE) while the suite ran?")
	}
	var rs []record
	if err == nil {
		rs, err = parse(b)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "suitecpu: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	report(os.Stdout, rs)
}
