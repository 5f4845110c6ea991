package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/repo"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/scratch"
)

// A layout changes nothing but what the links produce, so the layouts of
// a side need one build, not one each: the first layout's build links
// every other layout too (the shim links each again with its own pad into
// relinkDir), and each other layout is that build's trees with the
// files the layout changed replaced by its own links. That holds only
// when the files that differ between the plain build and the first
// layout are exactly links the shim made again, unchanged since (a build
// that strips, copies or post-processes what it linked breaks it); when
// it does not hold, each layout is built on its own, as the plain build
// is.

// treeOf indexes a scan's entries by their path below the side's folder.
func treeOf(src, out []Entry) map[string]Entry {
	t := make(map[string]Entry, len(src)+len(out))
	for _, e := range src {
		t["src/"+e.Path] = e
	}
	for _, e := range out {
		t["out/"+e.Path] = e
	}
	return t
}

// BuildLayouts is BuildLayout for each of ls (none of them the plain
// build plain is), reusing one build for all where the toolchain allows:
// the baseline's from the cache, where an entry verifies, and the rest by
// relinking (see above). A build whose first layout links the plain
// build's programs is not built again in the others: every side is that
// one, its Unmoved saying why (kept in the cache with it). A side that
// failed to build is returned as BuildLayout returns it; the caller reads
// OK.
func (r *Run) BuildLayouts(ctx context.Context, role Role, commit string, plain *Side, ls []Layout) ([]*Side, error) {
	sides := make([]*Side, len(ls))
	var todo []Layout
	for i, l := range ls {
		if role == Baseline {
			s, err := r.cachedLayout(ctx, commit, l)
			if err != nil {
				return nil, err
			}
			if s != nil && s.Unmoved != "" {
				return unmovedSides(sides, s), nil
			}
			sides[i] = s
		}
		if sides[i] == nil {
			todo = append(todo, l)
		}
	}
	if len(todo) == 0 {
		return sides, nil
	}
	v := variant{layout: &todo[0], plain: plain}
	if todo[0].Pad > 0 && len(todo) > 1 && plain.tree != nil {
		v.relink = todo
	}
	first, err := r.build(ctx, role, commit, v)
	if err != nil {
		return nil, err
	}
	if first.Unmoved != "" {
		return unmovedSides(sides, first), nil
	}
	changed := first.relinked(plain)
	for i, l := range ls {
		switch {
		case sides[i] != nil:
			continue
		case l == todo[0] || !first.OK():
			// A build that fails in one layout is not tried in the others.
			sides[i] = first
		case changed != nil:
			if sides[i], err = r.relinkedSide(ctx, first, l, changed); err != nil {
				return nil, err
			}
		default:
			if sides[i], err = r.BuildLayout(ctx, role, commit, l); err != nil {
				return nil, err
			}
		}
	}
	return sides, nil
}

// unmovedSides makes s, a layout whose programs are the plain build's,
// every layout: the others would not move either.
func unmovedSides(sides []*Side, s *Side) []*Side {
	for i := range sides {
		sides[i] = s
	}
	return sides
}

// cachedLayout is the baseline's build in layout l from the cache, or nil.
func (r *Run) cachedLayout(ctx context.Context, commit string, l Layout) (*Side, error) {
	c, err := r.repo.Store("").ReadCommit(repo.NewHash(commit))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", commit)
	}
	key := Key{Tree: c.Tree.String(), Command: r.target.Build, TargetPath: r.target.Path, Isolation: r.sandbox.Isolation, Layout: l.cacheKey()}
	if _, err := os.Stat(filepath.Join(r.cache().entry(key), manifestName)); err != nil {
		return nil, nil
	}
	return r.BuildLayout(ctx, Baseline, commit, l)
}

// relinked returns the files (by path below the side's folder) that
// differ between plain and s, each with the link the shim made again that
// it is: itself, or the link it is a copy of (cargo puts its binaries in
// place so, a Makefile may cp them). A changed file that is neither but
// was last written before the build's first link is the same in every
// layout (the shim's path, which cmake and cargo record) and is kept as
// the first layout has it, as is a build tool's log of its runs
// (buildLog). It returns nil when no link changed, or when a
// changed file is none of these, as one the build stripped or otherwise
// made from its links after linking them.
func (s *Side) relinked(plain *Side) map[string]string {
	if s.relinks == "" || !s.OK() || s.tree == nil || plain.tree == nil {
		return nil
	}
	for p := range plain.tree {
		if _, ok := s.tree[p]; !ok {
			return nil
		}
	}
	own := filepath.Join(s.relinks, fmt.Sprint(s.Layout.Index))
	changed, links := map[string]string{}, map[string]string{}
	for p, e := range s.tree {
		if was := plain.tree[p]; was == e {
			continue
		} else if e.Type != typeFile || was.Type != typeFile {
			return nil
		}
		changed[p] = ""
		if sum, err := fileSHA256(own, p); err == nil && sum == e.SHA256 {
			changed[p], links[e.SHA256] = p, p
		}
	}
	mark, err := modTime(s.relinks, linkedMark)
	if err != nil {
		return nil
	}
	for p, from := range changed {
		if from != "" {
			continue
		}
		if changed[p] = links[s.tree[p].SHA256]; changed[p] != "" {
			continue
		}
		if t, err := modTime(filepath.Join(s.Src, ".."), p); (err != nil || !t.Before(mark)) && !buildLog[filepath.Base(p)] {
			return nil
		}
		delete(changed, p)
	}
	if len(links) == 0 {
		return nil
	}
	return changed
}

// buildLog names the files a build tool keeps of its own runs, which it
// writes after every step, the links too, and which differ between any two
// builds (times, hashes of commands): ninja's log and its dependency
// database. No program is made of them, so a layout keeps the first
// layout's.
var buildLog = map[string]bool{".ninja_log": true, ".ninja_deps": true}

// modTime is the modification time of the file at rel below root.
func modTime(root, rel string) (time.Time, error) {
	f, err := OpenInTree(root, rel)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

func fileSHA256(root, rel string) (string, error) {
	f, err := OpenInTree(root, rel)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relinkedSide is first's trees in layout l: a verified copy, with each
// changed file replaced by l's link of it. A baseline's is cached as its
// build would be.
func (r *Run) relinkedSide(ctx context.Context, first *Side, l Layout, changed map[string]string) (*Side, error) {
	start := time.Now()
	base := filepath.Join(r.dir.Path, fmt.Sprintf("%s-layout-%d", first.Role, l.Index))
	if err := os.Mkdir(base, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", base)
	}
	s := &Side{Role: first.Role, Commit: first.Commit, Src: filepath.Join(base, "src"), Out: filepath.Join(base, "out"), Layout: &l, Relinked: true, run: r}
	s.shim = filepath.Join(base, "shim")
	if err := r.layoutShim(s.shim, l, nil); err != nil {
		return nil, err
	}
	var src, out []Entry
	for p, e := range first.tree {
		e.Path = p[len("src/"):]
		if strings.HasPrefix(p, "src/") {
			src = append(src, e)
		} else {
			out = append(out, e)
		}
	}
	if err := copyVerified(first.Src, s.Src, src); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot copy layout %d's build", first.Layout.Index)
	}
	if err := copyVerified(first.Out, s.Out, out); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot copy layout %d's build", first.Layout.Index)
	}
	from := filepath.Join(first.relinks, fmt.Sprint(l.Index))
	for p, link := range changed {
		root, rel := s.Src, p[len("src/"):]
		if strings.HasPrefix(p, "out/") {
			root = s.Out
		}
		if err := replaceInTree(root, rel, from, link, first.tree[p].Mode); err != nil {
			// A link the shim could not make again: this layout is built
			// on its own.
			scratch.RemoveAll(base)
			if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOENT) {
				return r.BuildLayout(ctx, first.Role, first.Commit, l)
			}
			return nil, errs.Wrap(errs.Failure, err, "cannot relink %s in layout %d", p, l.Index)
		}
	}
	scanSrc, err := sealAndScan(s.Src, r.owner, func(string) bool { return false })
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read back the relinked checkout")
	}
	scanOut, err := sealAndScan(s.Out, r.owner, func(string) bool { return false })
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read back the relinked output")
	}
	s.Outputs, s.tree = outputsOf(scanOut.entries), treeOf(scanSrc.entries, scanOut.entries)
	s.BuildCPU = time.Since(start)
	if s.Role == Baseline {
		c, err := r.repo.Store("").ReadCommit(repo.NewHash(s.Commit))
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", s.Commit)
		}
		key := Key{Tree: c.Tree.String(), Command: r.target.Build, TargetPath: r.target.Path, Isolation: r.sandbox.Isolation, Layout: l.cacheKey()}
		m := manifest{Version: manifestVersion, Key: key, Created: time.Now().UTC(), Src: scanSrc.entries, Out: scanOut.entries}
		if err := r.cache().store(ctx, m, s.Src, s.Out); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// replaceInTree writes the file at rel below from (layout l's link) over
// rel below root, without following a symlink on either side.
func replaceInTree(root, rel, from, fromRel string, mode uint32) error {
	in, err := OpenInTree(from, fromRel)
	if err != nil {
		return err
	}
	defer in.Close()
	dir, err := openBeneath(root, filepath.Dir(rel), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	name := filepath.Base(rel)
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	out := os.NewFile(uintptr(fd), name)
	defer out.Close()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return out.Chmod(os.FileMode(mode))
}
