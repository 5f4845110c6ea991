package risk

import (
	"slices"
	"testing"
)

func TestScanDiff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		added string
		want  []string
	}{
		{"plain arithmetic", "x = x * 3 + 1;", nil},
		{"a word mentioning threads in a comment", "// no threads or locks here", nil},
		{"go statement", "\tgo worker(ch)", []string{"threads in f"}},
		{"go func literal", "go func() { done <- true }()", []string{"threads in f"}},
		{"pthread", "pthread_create(&t, NULL, run, NULL);", []string{"threads in f"}},
		{"openmp", "#pragma omp parallel for", []string{"threads in f"}},
		{"go mutex", "var mu sync.Mutex", []string{"locks in f"}},
		{"lock call", "mu.Lock()", []string{"locks in f"}},
		{"C11 atomics", "_Atomic int n;", []string{"atomics in f"}},
		{"go atomics", "atomic.AddInt64(&n, 1)", []string{"atomics in f"}},
		{"gcc builtins", "__sync_fetch_and_add(&n, 1);", []string{"atomics in f"}},
		{"unsafe", `p := (*int)(unsafe.Pointer(&b[0]))`, []string{"unsafe in f"}},
		{"inline asm", `__asm__ volatile("nop");`, []string{"inline-asm in f"}},
		{"fast math", "CFLAGS = -O2 -ffast-math", []string{"fast-math in f"}},
		{"Ofast", "cc -Ofast -o prog prog.c", []string{"fast-math in f"}},
		{"an include of sys/", "#include <sys/stat.h>", nil},
		{"a variable named like a call", "int uname_len = 3;", nil},
		{"getenv", `int reps = getenv("HOME") ? 1 : REPS;`, []string{"environment in f"}},
		{"the parent", "if (getppid() == 1)", []string{"environment in f"}},
		{"PID 1's command line", `FILE *f = fopen("/proc/1/cmdline", "r");`, []string{"environment in f"}},
		{"the priority", "if (getpriority(PRIO_PROCESS, 0) < 0)", []string{"environment in f"}},
		{"stdout's kind", "fstat(1, &st) == 0 && S_ISFIFO(st.st_mode)", []string{"environment in f"}},
		{"stdout's kind through fileno", "fstat(fileno(stdout), &st);", []string{"environment in f"}},
		{"a terminal", "if (!isatty(1)) setvbuf(stdout, 0, _IOFBF, 1 << 16);", []string{"environment in f"}},
		{"environ", "for (char **e = environ; *e; e++)", []string{"environment in f"}},
		{"a three-parameter main", "int main(int argc, char **argv, char **envp) {", []string{"environment in f"}},
		{"a three-parameter main with arrays", "int main(int n, char *v[], char *e[])", []string{"environment in f"}},
		{"a plain main", "int main(int argc, char **argv) {", nil},
		{"go getenv", `if os.Getenv("HOME") == "/home/hone" {`, []string{"environment in f"}},
		{"go parent", "if os.Getppid() == 1 {", []string{"environment in f"}},
		{"go stdout", "fi, _ := os.Stdout.Stat()", []string{"environment in f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff := "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+" + tc.added + "\n"
			if got := ScanDiff(diff); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("ScanDiff = %v, want %v", got, tc.want)
			}
		})
	}
}

// Removed lines are not the patch's doing.
func TestScanDiffIgnoresRemovedLines(t *testing.T) {
	diff := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-go worker(ch)\n+worker(ch)\n"
	if got := ScanDiff(diff); len(got) != 0 {
		t.Errorf("ScanDiff = %v", got)
	}
}

// Code that tells a sanitizer build from a plain one, or turns a
// sanitizer off, can pass a sanitizer gate while the measured build
// misbehaves: a faster patch that adds it needs a person.
func TestCandidateThatDetectsTheSanitizerBuildNeedsReview(t *testing.T) {
	diff := "+++ b/targets/l/prog.c\n" +
		"+#if defined(__SANITIZE_ADDRESS__)\n" +
		"+\treturn slow(head);\n" +
		"+#endif\n" +
		"+++ b/targets/l/other.c\n" +
		"+static int x = 1;\n"
	got := ScanDiff(diff)
	if len(got) != 1 || got[0] != "sanitizer-evasion in targets/l/prog.c" {
		t.Errorf("risk signals %q, want the evasion in prog.c alone", got)
	}
}
