package layout

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

// tree writes files (slash paths relative to a new temp dir) and returns the dir.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const cMain = "int main(void) { return 0; }\n"

func TestFindsEachBuildSystem(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		path   string // --path, "" to discover
		system string
		at     string // the target's path
		target string // the target's name
		build  string // in the build command
		gates  []string
		bench  string // the bench command, "" for none
		prot   []string
		files_ []string
	}{
		{
			name: "make in a subdirectory, program from all",
			files: map[string]string{
				"targets/wf/Makefile": "BIN := wf\nCFLAGS = -O2\n\nall: $(BIN)\n\n$(BIN): wf.c\n\t$(CC) $(CFLAGS) -o $@ wf.c\n\ntest: $(BIN)\n\t./run-tests\n\n.PHONY: all test\n",
				"targets/wf/wf.c":     cMain, "targets/wf/tests/t.c": cMain,
			},
			system: Make, at: "targets/wf", target: "wf", build: "make",
			gates: []string{"unit=make test", "golden=./wf {seed}"}, bench: "./wf {seed}",
			prot: []string{"GNUmakefile", "Makefile", "makefile", "**/*.mk", "tests/**"}, files_: []string{"**/*.c"},
		},
		{
			name: "cmake at the top level builds from $HONE_ROOT, target is src",
			files: map[string]string{
				"CMakeLists.txt":       "project(Fast C)\nadd_executable(fast src/main.c) # the program\nenable_testing()\nadd_subdirectory(tests)\n",
				"src/main.c":           cMain,
				"src/fast.h":           "",
				"tests/CMakeLists.txt": "add_executable(unit unit.c)\nadd_test(NAME unit COMMAND unit)\n",
				"tests/unit.c":         cMain,
			},
			system: CMake, at: "src", target: "Fast", build: "cmake -S $HONE_ROOT -B $HONE_OUT/build",
			gates: []string{"unit=ctest --test-dir /tmp/build", "golden=$HONE_OUT/build/fast {seed}"}, bench: "$HONE_OUT/build/fast {seed}",
			prot: []string{"**/CMakeLists.txt", "**/*.cmake"}, files_: []string{"**/*.c", "**/*.h"},
		},
		{
			name: "meson skips the test's executable",
			files: map[string]string{
				"m/meson.build":       "project('m', 'c')\nsubdir('tests')\nexecutable('mprog', 'main.c')\n",
				"m/main.c":            cMain,
				"m/tests/meson.build": "t = executable('check', 'check.c')\ntest('check', t)\n",
			},
			system: Meson, at: "m", target: "m", build: "meson setup --buildtype=debugoptimized $HONE_OUT/build .",
			gates: []string{"unit=meson test -C /tmp/build --no-rebuild", "golden=$HONE_OUT/build/mprog {seed}"}, bench: "$HONE_OUT/build/mprog {seed}",
			prot: []string{"**/meson.build", "meson.options", "meson_options.txt", "tests/**"},
		},
		{
			name: "meson tests named by an expression in a foreach are tests",
			files: map[string]string{
				"meson.build":       "project('ini', 'c')\nlib = static_library('ini', 'ini.c')\nif get_option('tests')\n  subdir('tests')\nendif\n",
				"ini.c":             "int ini(void) { return 0; }\n",
				"tests/meson.build": "foreach name : ['a', 'b']\n  exe = executable('unittest_' + name, 'unittest.c')\n  test('test_' + name, exe)\nendforeach\n",
			},
			system: Meson, at: ".", build: "meson setup --buildtype=debugoptimized $HONE_OUT/build .",
			gates: []string{"unit=meson test -C /tmp/build --no-rebuild"}, files_: []string{"ini.c"},
		},
		{
			name: "cargo at the top level, target is src",
			files: map[string]string{
				"Cargo.toml":  "[package]\nname = \"wc-fast\"\nversion = \"0.1.0\"\n",
				"Cargo.lock":  "version = 3\n",
				"src/main.rs": "fn main() {}\n", "src/lib.rs": "", "tests/t.rs": "",
			},
			system: Cargo, at: "src", target: "wc-fast", build: "cargo build --release --locked --offline",
			gates: []string{"unit=cargo test --locked --offline", "golden=$HONE_OUT/target/release/wc-fast {seed}"}, bench: "$HONE_OUT/target/release/wc-fast {seed}",
			files_: []string{"**/*.rs"},
		},
		{
			name: "cargo library with a fixed-work bench harness",
			files: map[string]string{
				"crates/lib1/Cargo.toml":         "[package]\nname = \"lib1\"\n\n[[bench]]\nname = \"speed\"\nharness = false\n",
				"crates/lib1/src/lib.rs":         "",
				"crates/lib1/benches/speed.rs":   "fn main() {}\n",
				"crates/lib1/Cargo.lock":         "version = 3\n",
				"crates/lib1/.cargo/config.toml": "",
			},
			system: Cargo, at: "crates/lib1", target: "lib1", build: "--locked --offline --bench speed --message-format=json",
			gates: []string{"unit=cargo test --locked --offline"}, bench: "$HONE_OUT/speed-bench",
			prot: []string{".cargo/**", "Cargo.lock", "Cargo.toml", "benches/**", "build.rs", "rust-toolchain", "rust-toolchain.toml", "vendor/**"}, files_: []string{"src/**/*.rs"},
		},
		{
			name: "go main package with benchmarks in a subdirectory",
			files: map[string]string{
				"tools/wf/go.mod":        "module example.com/wf/v2\n\ngo 1.22\n",
				"tools/wf/main.go":       "package main\n\nfunc main() {}\n",
				"tools/wf/wf_test.go":    "package main\n\nimport \"testing\"\n\nfunc BenchmarkCount(b *testing.B) {}\n",
				"tools/wf/testdata/in":   "x",
				"tools/wf/Makefile":      "all:\n\tgo build\n",
				"tools/wf/internal/x.go": "package internal\n",
			},
			system: Go, at: "tools/wf", target: "wf", build: "go test -c -o $HONE_OUT/bench.test .",
			gates: []string{"unit=go test ./...", "golden=$HONE_OUT/wf {seed}"}, bench: "$HONE_OUT/bench.test -test.run='^$' -test.bench=. -test.benchtime=100x",
			prot: []string{"**/*_test.go", "**/testdata/**", "go.mod", "go.sum", "go.work", "go.work.sum", "testdata/**", "vendor/**"}, files_: []string{"**/*.go"},
		},
		{
			name: "go module at the top level with its packages under one directory",
			files: map[string]string{
				"go.mod":          "module example.com/lib\n",
				"pkg/a/a.go":      "package a\n",
				"pkg/a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc BenchmarkA(b *testing.B) {}\n",
				"pkg/b/b.go":      "package b\n",
				"docs/notes.md":   "",
			},
			system: Go, path: "", at: "pkg", target: "pkg", build: "go test -c -o $HONE_OUT/bench.test ./a",
			gates: []string{"unit=go test -C $HONE_ROOT ./..."}, bench: "$HONE_OUT/bench.test",
			prot: []string{"**/*_test.go", "**/testdata/**"},
		},
		{
			name: "a C library at the top level: the target is the top level, its files the library's",
			files: map[string]string{
				"CMakeLists.txt": "project(json C)\nadd_library(json json.c)\nadd_executable(count count.c)\nenable_testing()\nadd_subdirectory(tests)\n",
				"json.c":         "int parse(const char *s) { return 1; }\n",
				"json.h":         "int parse(const char *s);\n",
				"count.c":        cMain,
				"test.c":         "int check(void) { return 0; }\n",
				"fuzz_json.c":    "",
				"tests/t.c":      cMain,
			},
			system: CMake, at: ".", target: "", build: "cmake -S . -B $HONE_OUT/build",
			gates: []string{"golden=$HONE_OUT/build/count {seed}"}, bench: "$HONE_OUT/build/count {seed}",
			prot: []string{"**/CMakeLists.txt", "tests/**"}, files_: []string{"json.c", "json.h"},
		},
		{
			name: "cmake that renames a tracked header configures a copy, and keeps sources whose main is conditional",
			files: map[string]string{
				"CMakeLists.txt": "project(zlib C)\nif(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/zconf.h)\n  file(RENAME ${CMAKE_CURRENT_SOURCE_DIR}/zconf.h ${CMAKE_CURRENT_SOURCE_DIR}/zconf.h.included)\nendif()\n" +
					"add_library(z crc32.c inflate.c)\nadd_executable(minigzip test/minigzip.c)\nenable_testing()\nadd_executable(example test/example.c)\nadd_test(NAME example COMMAND example)\n",
				"zconf.h":           "",
				"crc32.c":           "#ifdef MAKECRCH\nint main(void) { return 0; }\n#endif\nunsigned long crc32(void) { return 0; }\n",
				"inflate.c":         "/* int main()\n   { }\n */\nint inflate(void) { return 0; }\n",
				"test/minigzip.c":   cMain,
				"test/example.c":    cMain,
				"contrib/puff/p.c":  cMain,
				"contrib/puff/p.h":  "",
				"examples/zpipe.c":  cMain,
				"examples/README":   "",
				"test/infcover.c":   cMain,
				"test/README":       "",
				"contrib/README.md": "",
			},
			system: CMake, at: ".", build: "cp -a ./. $HONE_OUT/src",
			gates: []string{"unit=ctest --test-dir /tmp/build", "golden=$HONE_OUT/build/minigzip {seed}"}, bench: "$HONE_OUT/build/minigzip {seed}",
			files_: []string{"crc32.c", "inflate.c", "zconf.h"},
		},
		{
			name: "a top Makefile that hands its goals to sub-makes: the program comes from the programs' Makefile",
			files: map[string]string{
				"Makefile": "PRGDIR = programs\n.PHONY: default lib-release lzx lzx-release\ndefault: lib-release lzx-release\n" +
					"lib-release:\n\t$(MAKE) -C lib $@\nlzx lzx-release:\n\t$(MAKE) -C $(PRGDIR) $@\ncheck:\n\t$(MAKE) -C tests $@\n",
				"lib/Makefile":      "lib-release: liblzx.a\nliblzx.a: lzx.o\n\t$(AR) rcs $@ lzx.o\n",
				"lib/lzx.c":         "int lzx(void) { return 0; }\n",
				"programs/Makefile": ".PHONY: lzx-release\nlzx-release: CFLAGS += -DNDEBUG\nlzx-release: lzx\nlzx: cli.c\n\t$(CC) -o $@ cli.c ../lib/liblzx.a\n",
				"programs/cli.c":    cMain,
				"tests/Makefile":    "check:\n\t./run\n",
			},
			system: Make, at: "lib", target: "lzx", build: "make -C $HONE_ROOT",
			gates: []string{"unit=make -C $HONE_ROOT check", "golden=$HONE_ROOT/programs/lzx {seed}"}, bench: "$HONE_ROOT/programs/lzx {seed}",
		},
		{
			name: "a top default goal whose own recipe runs the sub-makes: the program is what the programs' default goal names",
			files: map[string]string{
				"Makefile": "LIBDIR = lib\nPRGDIR = programs\n.PHONY: default\ndefault:\n\t@$(MAKE) -C $(LIBDIR)\n\t@$(MAKE) -C $(PRGDIR)\n\t@cp $(PRGDIR)/lzx .\ncheck:\n\t$(MAKE) -C tests $@\n",
				"lib/Makefile": "default: lib-release\nlib-release: liblzx.a liblzx\nliblzx.a: lzx.o\n\t$(AR) rcs $@ lzx.o\n" +
					"liblzx: $(LIBLZX)\n$(LIBLZX): *.c\n\t@$(CC) -shared $^ -fPIC -o $@\n",
				"lib/lzx.c":         "int lzx(void) { return 0; }\n",
				"programs/Makefile": "default: lzx-release\nlzx-release: DEBUGFLAGS=\nlzx-release: lzx\nlzx: cli.o ../lib/lzx.o\n\t$(CC) $(FLAGS) $^ -o $@$(EXT)\n",
				"programs/cli.c":    cMain,
				"tests/Makefile":    "check:\n\t./run\n",
			},
			system: Make, at: "lib", target: "lzx", build: "make -C $HONE_ROOT",
			gates: []string{"unit=make -C $HONE_ROOT check", "golden=$HONE_ROOT/programs/lzx {seed}"}, bench: "$HONE_ROOT/programs/lzx {seed}",
		},
		{
			name: "a fuzzing harness is not the program",
			files: map[string]string{
				"CMakeLists.txt":         "project(mj C)\nadd_library(mj mj.c)\nadd_subdirectory(fuzzing)\nadd_executable(mjstat mjstat.c)\n",
				"fuzzing/CMakeLists.txt": "add_executable(afl-main afl.c)\n",
				"fuzzing/afl.c":          cMain,
				"mj.c":                   "int mj(void) { return 0; }\n",
				"mjstat.c":               cMain,
			},
			system: CMake, at: ".", build: "cmake -S . -B $HONE_OUT/build",
			gates: []string{"golden=$HONE_OUT/build/mjstat {seed}"}, bench: "$HONE_OUT/build/mjstat {seed}",
			prot: []string{"fuzzing/**"}, files_: []string{"mj.c"},
		},
		{
			name:   "go sources at the top level: the target is the top level",
			files:  map[string]string{"go.mod": "module m\n", "m.go": "package m\n", "m_test.go": "package m\n", "bench.go": "package m\n"},
			system: Go, at: ".", build: "go build", gates: []string{"unit=go test ./..."}, files_: []string{"m.go"},
		},
		{
			name: "--path below a top-level project finds its build file",
			files: map[string]string{
				"Makefile":    "prog: src/p.c\n\tcc -o prog src/p.c\ncheck:\n\t./prog\n",
				"src/p.c":     cMain,
				"src/p_ref.c": cMain,
			},
			path: "src", system: Make, at: "src", build: "make -C $HONE_ROOT",
			gates: []string{"unit=make -C $HONE_ROOT check", "golden=$HONE_ROOT/prog {seed}"}, bench: "$HONE_ROOT/prog {seed}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Find(tree(t, tt.files), tt.path)
			if err != nil || l == nil {
				t.Fatalf("Find: %v, %v", l, err)
			}
			if l.System != tt.system || l.Path != tt.at || (tt.target != "" && l.Name != tt.target) {
				t.Errorf("found %s at %s named %s, want %s at %s named %s", l.System, l.Path, l.Name, tt.system, tt.at, tt.target)
			}
			if !strings.Contains(l.Build.Run, tt.build) {
				t.Errorf("build %q does not contain %q", l.Build.Run, tt.build)
			}
			if len(l.Gates) != len(tt.gates) {
				t.Errorf("gates %v, want %v", gateNames(l), tt.gates)
			}
			for i, want := range tt.gates {
				name, run, _ := strings.Cut(want, "=")
				if i < len(l.Gates) && (l.Gates[i].Name != name || !strings.Contains(l.Gates[i].Run, run) || l.Gates[i].Equivalence != (name == "golden")) {
					t.Errorf("gate %d = %+v, want %s running %q", i, l.Gates[i], name, run)
				}
			}
			switch {
			case tt.bench == "" && l.Bench != nil:
				t.Errorf("bench %q, want none", l.Bench.Run)
			case tt.bench != "" && (l.Bench == nil || !strings.HasPrefix(l.Bench.Run, tt.bench)):
				t.Errorf("bench %+v, want %q", l.Bench, tt.bench)
			}
			for _, p := range tt.prot {
				if !slices.Contains(l.Protect, p) {
					t.Errorf("protect %q lacks %q", l.Protect, p)
				}
			}
			if tt.files_ != nil && !slices.Equal(l.Files, tt.files_) {
				t.Errorf("files %q, want %q", l.Files, tt.files_)
			}
		})
	}
}

func gateNames(l *Layout) []string {
	var n []string
	for _, g := range l.Gates {
		n = append(n, g.Name)
	}
	return n
}

func TestChoicesInitCannotMakeAreUsageErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"two projects", map[string]string{"a/go.mod": "module a\n", "b/Cargo.toml": "[package]\nname = \"b\"\n"}, "found several projects (a, b); pass --path DIR"},
		{"go packages in several directories", map[string]string{"go.mod": "module m\n", "cmd/m/main.go": "package main\n", "internal/x/x.go": "package x\n"}, "pass --path DIR"},
		{"only programs at the top level", map[string]string{"CMakeLists.txt": "project(x)\n", "x.c": cMain, "x_test.c": ""}, "found CMakeLists.txt at the repository top level, but no source file there to optimize; pass --path DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Find(tree(t, tt.files), "")
			if !errs.Is(err, errs.Usage) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Find = %v, %v; want a usage error saying %q", l, err, tt.want)
			}
		})
	}
}

func TestNothingFound(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"empty":                         {"README": ""},
		"a build file too deep":         {"a/b/c/Makefile": "all:\n"},
		"only in a vendored directory":  {"vendor/x/go.mod": "module x\n"},
		"a directory named like a file": {"Makefile/x": ""},
	} {
		t.Run(name, func(t *testing.T) {
			if l, err := Find(tree(t, files), ""); l != nil || err != nil {
				t.Errorf("Find = %+v, %v; want nothing", l, err)
			}
		})
	}
	if l, err := Find(tree(t, map[string]string{"x/y.c": cMain}), "x"); l != nil || err != nil {
		t.Errorf("Find with --path = %+v, %v; want nothing", l, err)
	}
}

// A Makefile next to a more specific build file is taken for a wrapper.
func TestMostSpecificBuildFileWins(t *testing.T) {
	l, err := Find(tree(t, map[string]string{"p/Makefile": "all:\n\tcmake --build b\n", "p/CMakeLists.txt": "project(p)\n", "p/p.c": cMain}), "")
	if err != nil || l.System != CMake || l.BuildFile != "p/CMakeLists.txt" {
		t.Fatalf("Find = %+v, %v; want CMake", l, err)
	}
}

func TestCargoTellsWhatTheOfflineBuildNeeds(t *testing.T) {
	lockWithDeps := "version = 3\n\n[[package]]\nname = \"rand\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
	tests := []struct {
		name  string
		files map[string]string
		todo  string // "" for no to-do about dependencies
	}{
		{"no lock file", map[string]string{}, "commit a Cargo.lock"},
		{"registry crates not vendored", map[string]string{"c/Cargo.lock": lockWithDeps}, "run `cargo vendor` in c"},
		{"vendored", map[string]string{"c/Cargo.lock": lockWithDeps, "c/.cargo/config.toml": "[source.crates-io]\nreplace-with = \"vendored-sources\"\n"}, ""},
		{"no external crates", map[string]string{"c/Cargo.lock": "version = 3\n"}, ""},
		{"a workspace member, its lock and vendoring at the workspace root", map[string]string{"Cargo.lock": lockWithDeps, ".cargo/config": "[source.crates-io]\nreplace-with = \"vendored-sources\"\n", "Cargo.toml": "[workspace]\nmembers = [\"c\"]\n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.files["c/Cargo.toml"] = "[package]\nname = \"c\"\n"
			tt.files["c/src/main.rs"] = "fn main() {}\n"
			// A workspace root is a project of its own: name the member.
			l, err := Find(tree(t, tt.files), "c")
			if err != nil {
				t.Fatal(err)
			}
			found := ""
			for _, td := range l.Todo {
				if strings.Contains(td, "Cargo.lock") || strings.Contains(td, "vendor") {
					found = td
				}
			}
			if (tt.todo == "") != (found == "") || !strings.Contains(found, tt.todo) {
				t.Errorf("to do %q, want one saying %q", l.Todo, tt.todo)
			}
		})
	}
}

// criterion picks its iteration count from elapsed time: timing its
// process whole would hide any speedup, so it is never made the bench.
func TestTimedBenchHarnessIsNotTheBench(t *testing.T) {
	l, err := Find(tree(t, map[string]string{
		"c/Cargo.toml":   "[package]\nname = \"c\"\n\n[dev-dependencies]\ncriterion = \"0.5\"\n\n[[bench]]\nname = \"b\"\nharness = false\n",
		"c/src/lib.rs":   "",
		"c/benches/b.rs": "",
		"c/Cargo.lock":   "version = 3\n",
	}), "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Bench != nil || !slices.ContainsFunc(l.Todo, func(s string) bool { return strings.Contains(s, "criterion") }) {
		t.Errorf("bench %+v, to do %q; want no bench and a note about criterion", l.Bench, l.Todo)
	}
}

func TestMakefileReading(t *testing.T) {
	tests := []struct{ name, text, program, test string }{
		{"goal is the program", "prog: a.c\n\tcc -o prog a.c\n", "prog", ""},
		{"all names a variable", "OUT ?= bin/tool\nall: $(OUT) docs\n.PHONY: all docs\ncheck:\n\ttrue\n", "bin/tool", "check"},
		{"phony default goal", ".PHONY: build\nbuild: lib.a\n", "", ""},
		{"object files are not programs", "all: x.o\ntest:\n", "", "test"},
		{"special targets and patterns are skipped", ".SUFFIXES:\n%.o: %.c\n\tcc -c $<\nrun: main.o\n", "run", ""},
		{"assignments are not rules", "X := a:b\nY = c\nz: q\n", "z", ""},
		{"unresolved variable", "all: $(shell echo x)\n", "", ""},
		{"comments and recipes", "# all: fake\n\tnot: a rule\ntool: # the tool\n", "tool", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parseMakefile([]byte(tt.text))
			if got := m.program(); got != tt.program {
				t.Errorf("program = %q, want %q", got, tt.program)
			}
			if got := m.testTarget(); got != tt.test {
				t.Errorf("test target = %q, want %q", got, tt.test)
			}
		})
	}
}

func TestScriptIsOneLineWhenItCan(t *testing.T) {
	if got := script(nil, "make"); got != "make" {
		t.Errorf("one step: %q", got)
	}
	if got := script([]string{"PATH=/opt/x/bin:$PATH"}, "go test ./..."); got != "PATH=/opt/x/bin:$PATH go test ./..." {
		t.Errorf("one step with env: %q", got)
	}
	want := "set -e\nexport A=1\na\nb\n"
	if got := script([]string{"A=1"}, "a", "b"); got != want {
		t.Errorf("steps: %q, want %q", got, want)
	}
	if got := shellQuote("/opt/my tools/bin"); got != "'/opt/my tools/bin'" {
		t.Errorf("quote: %q", got)
	}
	p := &project{path: "src"}
	if got := p.fromPath("my project"); got != "$HONE_ROOT/'my project'" {
		t.Errorf("a project directory with a space: %q", got)
	}
}
