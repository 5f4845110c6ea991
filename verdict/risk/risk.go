// Package risk finds what makes a faster patch need a person: speed bought
// with concurrency, memory-unsafe code, results-changing floating-point
// flags, work hidden in helpers. It reads the patch's added lines, its
// preprocessed C and C++ sources, its built binaries, and what its runs
// did, always against the baseline's.
package risk

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/sanitize"
)

// riskPatterns are what makes a faster patch need a human: speed bought with
// concurrency (races that tests rarely catch), memory-unsafe code, or
// floating-point flags that change results. They match added lines only.
// They are compiled on first use, not at start-up of every hone process.
var riskPatterns = sync.OnceValue(func() []riskPattern {
	return []riskPattern{
		{"atomics", regexp.MustCompile(`\b(sync/atomic|atomic\.[A-Z]\w*|_Atomic|__atomic_\w+|__sync_\w+|std::atomic|stdatomic\.h|atomic_\w+\s*\()`)},
		{"locks", regexp.MustCompile(`\b(sync\.(RW)?Mutex|pthread_(mutex|rwlock|spin)_\w+|std::(mutex|shared_mutex|lock_guard|unique_lock)|spin_?lock\w*|\.R?Lock\(\))`)},
		{"threads", regexp.MustCompile(`(^|[^\w.])go\s+(func\s*\(|[A-Za-z_][\w.]*\s*\()|\b(pthread_create|std::thread|std::async|thrd_create|fork\s*\(|errgroup\.|sync\.WaitGroup|runtime\.GOMAXPROCS)|#\s*pragma\s+omp|-fopenmp\b`)},
		{"unsafe", regexp.MustCompile(`\bunsafe\b`)},
		{"inline-asm", regexp.MustCompile(`\b(__asm__|__asm|asm\s*(volatile|goto)?\s*\()|^\s*TEXT\s+[·\w]`)},
		{"fast-math", regexp.MustCompile(`-Ofast\b|-ffast-math\b|-funsafe-math-optimizations\b|-ffinite-math-only\b|-fno-math-errno\b|-freciprocal-math\b|-fassociative-math\b|#\s*pragma\s+(GCC|clang)\s+(optimize|fp\b)|#\s*pragma\s+STDC\s+FP_CONTRACT|#\s*pragma\s+float_control|__attribute__\s*\(\(.*\b_*optimize_*\b|\[\[gnu::optimize`)},
		{"pragma", regexp.MustCompile(`\b_Pragma\s*\(|\b__pragma\s*\(`)},
		{"environment", environmentPattern()},
	}
})

// environmentCalls are the libc calls that tell a program how it was run:
// its environment variables, its parent, its terminal, its priority and
// limits, the machine. hone's runs cannot look like every place a program
// runs (HOME is the jail's, the parent is the jail's init, stdout is a
// pipe), so a patch that keys its work on such a fact can do less of it
// under hone alone and still print the right answer, which no gate or
// output check catches: a faster patch that adds such a look needs a
// person. Both the source patterns and the built symbols start from them.
var environmentCalls = []string{"getenv", "secure_getenv", "getppid", "getpgid", "getsid", "getpriority",
	"sched_getaffinity", "sched_getscheduler", "sched_getparam", "sched_getattr", "isatty", "ttyname",
	"getrlimit", "prlimit", "getauxval", "uname", "readlink"}

// environmentPattern matches those calls in source, and the other looks
// at how the program was run: environ, /proc and /sys paths, fstat on a
// standard stream, Go's os and syscall equivalents, and a three-parameter
// main, which reads the environment without a call.
func environmentPattern() *regexp.Regexp {
	return regexp.MustCompile(`\b(` + strings.Join(environmentCalls, "|") + `)\s*\(|\b(environ|__environ)\b|/(proc|sys)/|` +
		`\bfstat(64)?\s*\(\s*(0|1|2|STDIN_FILENO|STDOUT_FILENO|STDERR_FILENO|fileno\s*\(\s*std(in|out|err)\s*\))\s*,|\bos\.Std(in|out|err)\.Stat\b|` +
		`\bos\.(Getenv|LookupEnv|Environ|Getppid|Getpgrp|Executable|Hostname)\b|\bsyscall\.(Getenv|Environ|Getppid|Getpriority)\b|` +
		`\bmain\s*\(\s*int\s+\w+\s*,\s*char\s*\*\s*\*?\s*\w+\s*(\[\s*\])?\s*,`)
}

// countOf counts the matches of re in text.
func countOf(text []byte, re *regexp.Regexp) int {
	if len(text) == 0 {
		return 0
	}
	return len(re.FindAllIndex(text, -1))
}

type riskPattern struct {
	name string
	re   *regexp.Regexp
}

// Diff lists the risk signals in the lines the patch adds, as
// "<signal> in <file>" (sorted, each once).
func Diff(ctx context.Context, root, pin, commit string) ([]string, error) {
	out, err := git.Run(ctx, git.Cmd{Dir: root, Isolated: true,
		Args: []string{"diff", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames", "-U0", pin, commit, "--"}})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot diff the patch against its pin")
	}
	return ScanDiff(string(out)), nil
}

// ScanDiff lists the risk signals of the added lines of a unified diff.
func ScanDiff(diff string) []string {
	seen := map[string]bool{}
	file := ""
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "+++ "):
			file = strings.TrimPrefix(strings.TrimPrefix(line, "+++ "), "b/")
		case strings.HasPrefix(line, "+"):
			added := line[1:]
			for _, p := range riskPatterns() {
				if p.re.MatchString(added) {
					seen[p.name+" in "+file] = true
				}
			}
			if sanitize.Evasive(added) {
				seen["sanitizer-evasion in "+file] = true
			}
		}
	}
	sigs := make([]string, 0, len(seen))
	for s := range seen {
		sigs = append(sigs, s)
	}
	sort.Strings(sigs)
	return sigs
}
