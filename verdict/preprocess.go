package verdict

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
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

// preprocessedRisks lists the risk signals the preprocessed changed
// sources add, as "<signal> in <file> (preprocessed)". A file cc cannot
// preprocess (a header path hone cannot guess) is scanned as written
// instead, and one that then uses _Pragma or token pasting is a signal of
// its own: what it expands to could not be seen.
func preprocessedRisks(ctx context.Context, m measurer, root, pin, commit string, base, cand *build.Side, targetPath string) ([]string, error) {
	files, err := changedSources(ctx, root, pin, commit)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, f := range files {
		c, cerr := preprocess(ctx, m, cand, f.path, targetPath)
		if cerr != nil {
			return nil, cerr
		}
		var b []byte
		if f.existed {
			if b, err = preprocess(ctx, m, base, f.path, targetPath); err != nil {
				return nil, err
			}
		}
		how := "preprocessed"
		if c == nil {
			how = "as written: cc -E failed"
			c, b = rawSource(cand, f.path), rawSource(base, f.path)
			if hidden := countOf(c, hiddenRE()) - countOf(b, hiddenRE()); hidden > 0 {
				seen[fmt.Sprintf("hidden-code in %s (cc -E failed, and it adds _Pragma or ## that only the preprocessor would show)", f.path)] = true
			}
		}
		for _, p := range riskPatterns() {
			if countOf(c, p.re) > countOf(b, p.re) {
				seen[fmt.Sprintf("%s in %s (%s)", p.name, f.path, how)] = true
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
	out, err := git.Run(ctx, git.Cmd{Dir: root, Isolated: true, Args: append(append([]string{"diff-tree"}, git.RawDiffArgs...), "--no-commit-id", pin, commit)})
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot list the patch's changes")
	}
	changes, err := git.ParseRaw(out)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read git's list of changes")
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
// folder with the usual include folders, and returns the lines that come
// from the checkout's files; nil when cc failed.
func preprocess(ctx context.Context, m measurer, s *build.Side, file, targetPath string) ([]byte, error) {
	dir := build.SrcDir + "/" + path.Dir(file)
	var incs []string
	for _, d := range []string{".", build.SrcDir + "/" + targetPath, build.SrcDir + "/" + targetPath + "/include", build.SrcDir + "/include", build.OutDir} {
		incs = append(incs, "-I"+jail.Quote(d))
	}
	spec := s.Spec("cc -E -w "+strings.Join(incs, " ")+" "+jail.Quote(path.Base(file)), preprocessTimeout)
	spec.Dir = dir
	spec.OutputCap = 32 << 20
	res, err := m.exec(ctx, spec)
	if err != nil {
		return nil, err
	}
	if !res.Success() || res.Stdout.Truncated() {
		return nil, nil
	}
	return ownLines(res.Stdout.Bytes()), nil
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

// rawSource is a file of the side's checkout as written, or nil.
func rawSource(s *build.Side, file string) []byte {
	f, err := build.OpenInTree(s.Src, file)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16<<20))
	return b
}
