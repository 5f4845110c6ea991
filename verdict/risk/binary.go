package risk

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hone-perf/hone/build"
)

// Risk signals that survive spelling. A diff can hide a thread, a fork or
// a fast-math switch from any pattern over its text (a function pointer, a
// macro that pastes a name together, a pragma built by _Pragma), but not
// from what was built: the candidate's binaries are compared with the
// baseline's, symbol by symbol, and by the compiler options DWARF records.

// riskySymbols name what a new symbol in a binary means, after any symbol
// version is cut off: the name itself, or any name starting with a prefix
// that ends in "_" or is a mangled C++ name.
var riskySymbols = []struct {
	signal   string
	prefixes []string
}{
	// libc starts a thread itself for a SIGEV_THREAD timer or message
	// queue notification, for POSIX AIO and for asynchronous name lookups.
	{"threads", []string{"pthread_create", "thrd_create", "_ZNSt6thread", "_ZSt5async", "GOMP_", "omp_", "__kmpc_",
		"timer_create", "mq_notify", "aio_", "lio_listio", "lio_listio64", "getaddrinfo_a"}},
	// wordexp runs a shell for every command substitution.
	{"processes", []string{"fork", "vfork", "clone", "clone3", "__clone", "posix_spawn", "posix_spawnp", "system", "popen",
		"wordexp", "execv", "execvp", "execvpe", "execl", "execlp", "execle", "execve", "fexecve"}},
	{"dynamic-code", []string{"dlopen", "dlmopen", "dlsym", "dlvsym", "syscall"}},
	{"atomics", []string{"__atomic_", "__sync_"}},
	{"fast-math", []string{"set_fast_math", "__set_fast_math"}},
	// What tells a program how it was run (environmentCalls, with their
	// variants), through libc or Go's os and syscall packages, and the
	// calls that open and stat /proc and /sys.
	{"environment", append(append([]string{}, environmentCalls...), "environ", "__environ", "ttyname_r",
		"getrlimit64", "prlimit64", "readlinkat",
		"fopen", "fopen64", "open", "open64", "openat", "openat64", "__open_2", "__open64_2", "__openat_2", "opendir",
		"stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "fstatat", "fstatat64", "statx",
		"__xstat", "__xstat64", "__lxstat", "__lxstat64", "__fxstat", "__fxstat64", "__fxstatat", "__fxstatat64",
		"os.Getenv", "os.LookupEnv", "os.Environ", "os.Getppid", "os.Executable", "os.Hostname", "os.(*File).Stat",
		"syscall.Getenv", "syscall.Environ", "syscall.Getppid", "syscall.Getpriority", "syscall.Fstat")},
}

// riskyFlags are compiler options that trade correctness for speed or add
// concurrency, as DWARF's DW_AT_producer records them.
var riskyFlags = map[string]string{
	"-Ofast": "fast-math", "-ffast-math": "fast-math", "-funsafe-math-optimizations": "fast-math",
	"-ffinite-math-only": "fast-math", "-fno-math-errno": "fast-math", "-freciprocal-math": "fast-math",
	"-fassociative-math": "fast-math", "-fno-signed-zeros": "fast-math", "-fno-trapping-math": "fast-math",
	"-fcx-limited-range": "fast-math", "-fopenmp": "threads", "-fopenmp-simd": "threads",
	"-ftree-parallelize-loops": "threads",
}

// maxELF bounds the size of a binary hone reads.
const maxELF = 1 << 30

// Built lists the risk signals the candidate's build output has and
// the baseline's does not, as "<signal> in built <file> (<why>)", sorted.
// A file hone cannot read as ELF adds nothing: scripts and data are not
// code the linker saw.
func Built(base, cand *build.Side) []string {
	seen := map[string]bool{}
	for _, rel := range sortedKeys(cand.Outputs) {
		c, ok := readELF(cand.Out, rel)
		if !ok {
			continue
		}
		b, _ := readELF(base.Out, rel)
		for sym := range c.symbols {
			if b.symbols[sym] {
				continue
			}
			if sig := symbolSignal(sym); sig != "" {
				seen[fmt.Sprintf("%s in built %s (%s)", sig, rel, sym)] = true
			}
		}
		for flag := range c.flags {
			if !b.flags[flag] {
				seen[fmt.Sprintf("%s in built %s (compiled with %s)", riskyFlags[flag], rel, flag)] = true
			}
		}
		if c.symtab < b.symtab/2 {
			// Every symbol signal above reads the symbol table; a build
			// that strips it (or links statically, then strips) would
			// hide them all.
			seen[fmt.Sprintf("stripped in built %s (%d symbols where the baseline has %d)", rel, c.symtab, b.symtab)] = true
		}
		if c.initArray > b.initArray {
			seen[fmt.Sprintf("constructors in built %s (.init_array grew from %d to %d entries)", rel, b.initArray, c.initArray)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func symbolSignal(sym string) string {
	for _, r := range riskySymbols {
		for _, p := range r.prefixes {
			if sym == p || (strings.HasPrefix(sym, p) && (strings.HasSuffix(p, "_") || strings.HasPrefix(p, "_Z"))) {
				return r.signal
			}
		}
	}
	return ""
}

// elfFacts is what a binary says of itself.
type elfFacts struct {
	symbols   map[string]bool // every symbol name, defined or imported, versions cut off
	symtab    int             // entries of the symbol tables, .symtab and .dynsym
	flags     map[string]bool // risky options among its compile units' producers
	initArray int             // entries of .init_array
}

// readELF reads the facts of rel below root, never through a symlink (the
// build wrote the tree). ok is false for a file that is not ELF. A
// malformed ELF file is the candidate's to explain, not hone's to crash on.
func readELF(root, rel string) (facts elfFacts, ok bool) {
	facts = elfFacts{symbols: map[string]bool{}, flags: map[string]bool{}}
	f, err := build.OpenInTree(root, rel)
	if err != nil {
		return facts, false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxELF {
		return facts, false
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	ef, err := elf.NewFile(io.NewSectionReader(f, 0, maxELF))
	if err != nil {
		return facts, false
	}
	for _, list := range [][]elf.Symbol{symbolsOf(ef.Symbols), symbolsOf(ef.DynamicSymbols)} {
		facts.symtab += len(list)
		for _, s := range list {
			if name, _, _ := strings.Cut(s.Name, "@"); name != "" {
				facts.symbols[name] = true
			}
		}
	}
	if s := ef.Section(".init_array"); s != nil && s.Entsize > 0 {
		facts.initArray = int(s.Size / s.Entsize)
	} else if s != nil {
		facts.initArray = int(s.Size / 8)
	}
	if d, err := ef.DWARF(); err == nil {
		producerFlags(d, facts.flags)
	}
	return facts, true
}

func symbolsOf(read func() ([]elf.Symbol, error)) []elf.Symbol {
	s, _ := read()
	return s
}

// producerFlags adds the risky options of every compile unit's
// DW_AT_producer ("GNU C17 12.2.0 -mtune=generic -O2 -ffast-math").
func producerFlags(d *dwarf.Data, into map[string]bool) {
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if p, ok := e.Val(dwarf.AttrProducer).(string); ok {
				for _, w := range strings.Fields(p) {
					flag, _, _ := strings.Cut(w, "=")
					if _, risky := riskyFlags[flag]; risky {
						into[flag] = true
					}
				}
			}
		}
		r.SkipChildren()
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
