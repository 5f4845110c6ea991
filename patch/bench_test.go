package patch

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/workspace"
)

// BenchmarkPropose proposes a 500-line diff in a 10-file workspace and in a
// 10,000-file, 100 MB one. Propose never checks out a tree, so the two
// should cost about the same: run with -benchtime=30x and compare.
func BenchmarkPropose(b *testing.B) {
	for _, size := range []struct {
		name  string
		files int
		bytes int
	}{
		{"files=10", 10, 1 << 10},
		{"files=10000_100MB", 10000, 10 << 10},
	} {
		b.Run(size.name, func(b *testing.B) {
			ws := bigWorkspace(b, size.files, size.bytes)
			before := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := Request{Target: "t", Hotspot: "Hot", Class: 1 + i%MaxClass,
					Hypothesis: fmt.Sprintf("unroll loop %d by %d", i, i*7), Diff: benchDiff(i)}
				if _, err := Propose(context.Background(), ws, req); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time (hone and its git children) is steadier than wall
			// time on a shared machine.
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the user+system time of this process and its waited-for
// children.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

const benchLines = 1000

// benchDiff changes 250 lines of targets/t/hot.c: 500 changed lines, made
// distinct per iteration so every proposal is a new patch.
func benchDiff(iter int) []byte {
	var d strings.Builder
	d.WriteString("diff --git a/targets/t/hot.c b/targets/t/hot.c\n--- a/targets/t/hot.c\n+++ b/targets/t/hot.c\n")
	for h := 0; h < 250; h++ {
		line := h*4 + 2
		fmt.Fprintf(&d, "@@ -%d,3 +%d,3 @@\n", line-1, line-1)
		fmt.Fprintf(&d, " int v%d = %d;\n-int v%d = %d;\n+int v%d = %d; /* %d */\n int v%d = %d;\n", line-2, line-2, line-1, line-1, line-1, line-1, iter, line, line)
	}
	return []byte(d.String())
}

// bigWorkspace writes files blobs of about size bytes each with git
// fast-import (nothing is checked out), plus the target's hot.c.
func bigWorkspace(b testing.TB, files, size int) *workspace.Workspace {
	b.Helper()
	dir := b.TempDir()
	testgit.Git(b, dir, "init", "-q", "-b", "main")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(in, 1<<20)
	rng := rand.New(rand.NewSource(1))
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter t <t@t> 1700000000 +0000\ndata 4\npin\n")
	toml := "[targets.t]\npath = \"targets/t\"\npin = \"main\"\n"
	fmt.Fprintf(w, "M 100644 inline hone.toml\ndata %d\n%s\n", len(toml), toml)
	var hot strings.Builder
	for i := 0; i < benchLines; i++ {
		fmt.Fprintf(&hot, "int v%d = %d;\n", i, i)
	}
	fmt.Fprintf(w, "M 100644 inline targets/t/hot.c\ndata %d\n%s\n", hot.Len(), hot.String())
	buf := make([]byte, size/2)
	line := make([]byte, size)
	for i := 0; i < files-2; i++ {
		rng.Read(buf)
		n := copy(line, fmt.Sprintf("%x", buf))
		for j := 63; j < n; j += 64 {
			line[j] = '\n'
		}
		p := fmt.Sprintf("src/d%03d/f%05d.txt", i%100, i)
		if i%10 == 0 {
			p = fmt.Sprintf("targets/t/data/f%05d.txt", i)
		}
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n", p, n)
		w.Write(line[:n])
		w.WriteString("\n")
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hone.toml"), []byte(toml), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}
