package risk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
)

// A pattern over a diff's text misses what the preprocessor makes:
// _Pragma("GCC optimize(\"Ofast\")"), a pragma or an asm statement built
// by a macro, an optimize attribute behind a #define. So each C or C++
// file the patch changes is preprocessed in the jail, on both sides, and
// the risk patterns are counted over the lines that come from the
// checkout's own files (system headers have their own asm and
// attributes); a pattern that counts more on the candidate is a signal.

// preprocessTimeout bounds one cc -E.
const preprocessTimeout = 2 * time.Minute

// Exec runs one command in the jail, as the verdict's measurer does.
type Exec func(context.Context, jail.Spec) (*jail.Result, error)

// Preprocessed lists the risk signals the preprocessed changed
// sources add, as "<signal> in <file> (preprocessed)". A changed file cc
// cannot preprocess without an error is a signal of its own
// ("unpreprocessed"): what the part it could not expand would make is
// unknown, and a patch could make it fail on purpose.
func Preprocessed(ctx context.Context, m Exec, root, pin, commit string, base, cand *build.Side, targetPath string) ([]string, error) {
	files, err := changedSources(ctx, root, pin, commit)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	seen := map[string]bool{}
	incs := [2][]string{includeDirs(base, targetPath), includeDirs(cand, targetPath)}
	for _, f := range files {
		c, why, err := preprocess(ctx, m, cand, f.path, incs[1])
		if err != nil {
			return nil, err
		}
		if why != "" {
			seen[fmt.Sprintf("unpreprocessed in %s (cc -E failed: %s)", f.path, why)] = true
			continue
		}
		var b []byte
		if f.existed {
			if b, _, err = preprocess(ctx, m, base, f.path, incs[0]); err != nil {
				return nil, err
			}
		}
		for _, p := range riskPatterns() {
			if countOf(c, p.re) > countOf(b, p.re) {
				seen[fmt.Sprintf("%s in %s (preprocessed)", p.name, f.path)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

type changedSource struct {
	path    string
	existed bool // the file is at the pin too
}

// cSources are the extensions cc preprocesses as C or C++.
var cSources = map[string]bool{".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".c++": true, ".hpp": true, ".hh": true, ".hxx": true, ".inl": true, ".i": true}

// changedSources lists the C and C++ files the patch adds or modifies.
func changedSources(ctx context.Context, root, pin, commit string) ([]changedSource, error) {
	changes, err := git.TreeChanges(ctx, root, pin, commit)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the patch's changes")
	}
	var files []changedSource
	for _, c := range changes {
		if c.Status == "D" || c.Binary || !cSources[strings.ToLower(path.Ext(c.Path))] {
			continue
		}
		files = append(files, changedSource{path: c.Path, existed: c.Status != "A"})
	}
	return files, nil
}

// preprocess runs cc -E on file of side s in the jail, from the file's
// folder, with the include folders hone can find (incs, jail paths), and
// returns the lines that come from the checkout's or the build's files.
// why says, when cc failed or its output was too long to read whole, what
// went wrong.
func preprocess(ctx context.Context, m Exec, s *build.Side, file string, incs []string) (own []byte, why string, err error) {
	args := []string{"cc", "-E", "-w", "-I."}
	for _, d := range incs {
		args = append(args, "-I"+d)
	}
	var cmd strings.Builder
	for _, a := range append(args, path.Base(file)) {
		cmd.WriteString(jail.Quote(a) + " ")
	}
	spec := s.Spec(strings.TrimSpace(cmd.String()), preprocessTimeout)
	spec.Dir = path.Join(build.SrcDir, path.Dir(file))
	spec.OutputCap = 32 << 20
	res, err := m(ctx, spec)
	if err != nil {
		return nil, "", err
	}
	switch {
	case !res.Success():
		return nil, firstLine(res.Stderr.Tail(2048), res.Describe()), nil
	case res.Stdout.Truncated():
		return nil, "its output is over 32 MiB", nil
	}
	return ownLines(res.Stdout.Bytes()), "", nil
}

// maxIncludeDirs bounds the include folders hone passes to cc -E.
const maxIncludeDirs = 64

// includeDirs are the folders of the side's target and build output that
// hold headers, as jail paths: where a build's -I flags would point, as
// far as hone can tell without them.
func includeDirs(s *build.Side, targetPath string) []string {
	var out []string
	for _, root := range [][2]string{{filepath.Join(s.Src, filepath.FromSlash(targetPath)), path.Join(build.SrcDir, targetPath)}, {s.Out, build.OutDir}} {
		filepath.WalkDir(root[0], func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(out) >= maxIncludeDirs {
				return filepath.SkipDir
			}
			if d.IsDir() && p != root[0] && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() || !cSources[strings.ToLower(filepath.Ext(p))] || filepath.Ext(p) == ".c" {
				return nil
			}
			rel, _ := filepath.Rel(root[0], filepath.Dir(p))
			dir := path.Join(root[1], filepath.ToSlash(rel))
			if len(out) == 0 || out[len(out)-1] != dir {
				out = append(out, dir)
			}
			return nil
		})
	}
	return slices.Compact(out)
}

// firstLine is the first non-empty line of b, or fallback.
func firstLine(b []byte, fallback string) string {
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return errs.Clip(l)
		}
	}
	return fallback
}

// ownLines keeps the lines of cc -E output that its line markers attribute
// to files of the checkout (relative paths, or below /hone/src), and the
// pragma lines among them.
func ownLines(out []byte) []byte {
	var keep bytes.Buffer
	own := true
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := lineMarker(line); ok {
			own = !strings.HasPrefix(f, "<") && (!strings.HasPrefix(f, "/") || strings.HasPrefix(f, build.SrcDir+"/") || strings.HasPrefix(f, build.OutDir+"/"))
			continue
		}
		if own {
			keep.WriteString(line)
			keep.WriteByte('\n')
		}
	}
	return keep.Bytes()
}

// lineMarker reads `# 12 "file.c" 1 3` and returns the file.
func lineMarker(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, "# ")
	if !ok {
		return "", false
	}
	num, rest, ok := strings.Cut(rest, " ")
	if _, err := strconv.Atoi(num); err != nil || !ok || !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	name, err := strconv.Unquote(rest[:strings.LastIndexByte(rest, '"')+1])
	if err != nil {
		return "", false
	}
	return name, true
}
