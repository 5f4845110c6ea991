package sanitize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// Compilers are the names Shim wraps.
func Compilers() []string { return []string{"cc", "gcc", "c++", "g++", "clang", "clang++"} }

// launchers look their compiler up on PATH again: wrapped by the shim,
// they would find the shim and call it back forever.
var launchers = []string{"ccache", "sccache", "distcc", "icecc"}

// Shim writes into dir a wrapper for each compiler of Compilers found in
// search (the directories of the PATH the build will run with, in order;
// dir itself and compiler launchers such as ccache are passed over). Each
// wrapper runs the real compiler by the absolute path found now, with the
// command's own arguments followed by the sanitizer flags: put dir first
// on the build's PATH (bound read-only in the jail) and a build that
// names cc directly, or passes flags of its own, is built with the
// sanitizers all the same. It returns each wrapped name's real compiler.
// Shim is for C and C++ (and Rust's cc crate); a Go build gets its flags
// from GOFLAGS, and wrapping the C compiler under cgo's -race would link
// two race runtimes.
func Shim(dir string, sanitizers []string, search []string) (map[string]string, error) {
	if err := Check(sanitizers); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dir) {
		return nil, errs.Invalidf("shim directory %.100q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create the compiler shim directory")
	}
	flags := quoteAll(compilerFlags(sanitizers))
	found := FindCompilers(dir, search)
	for name, real := range found {
		script := "#!/bin/sh\n" +
			"# hone's sanitizer shim (" + strings.Join(sanitizers, ", ") + "): the real " + name + ", its flags last so none of the command's turns them off.\n" +
			"exec " + quote(real) + ` "$@" ` + flags + "\n"
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot write the compiler shim %s", name)
		}
		// WriteFile keeps the mode of a file already there.
		if err := os.Chmod(p, 0o755); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot write the compiler shim %s", name)
		}
	}
	if len(found) == 0 {
		return nil, errs.Failuref("no C or C++ compiler (%s) in %s to build with sanitizers", strings.Join(Compilers(), ", "), strings.Join(search, ":"))
	}
	return found, nil
}

// FindCompilers finds each compiler of Compilers in search (the
// directories of a build's PATH, in order), passing over shimDir and
// launchers such as ccache, which would look the compiler up again and
// find the shim: it returns each name found with its absolute path, for
// a shim that calls the real compiler.
func FindCompilers(shimDir string, search []string) map[string]string {
	found := map[string]string{}
	for _, name := range Compilers() {
		if real := lookPath(name, shimDir, search); real != "" {
			found[name] = real
		}
	}
	return found
}

// lookPath finds an executable name in search, skipping the shim's own
// directory and launchers.
func lookPath(name, shimDir string, search []string) string {
	self, _ := filepath.EvalSymlinks(shimDir)
	for _, d := range search {
		if !filepath.IsAbs(d) {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil && (r == self || d == shimDir) {
			continue
		}
		p := filepath.Join(d, name)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			continue
		}
		if target, err := filepath.EvalSymlinks(p); err == nil && slices.Contains(launchers, filepath.Base(target)) {
			continue
		}
		return p
	}
	return ""
}

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quote(w)
	}
	return strings.Join(q, " ")
}

// quote makes s one word for /bin/sh.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
