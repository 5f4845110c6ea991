// Package source shows a target's files exactly as they are at the target's
// pin commit, read from git's object store and never from the working tree,
// so an optimizer sees what hone will patch and measure. Paths are relative to
// the target's path and may not leave it; symlinks are shown, never followed.
package source

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/workspace"
)

const (
	// DefaultLimit is the number of lines shown when the caller gives none.
	DefaultLimit = 2000
	// MaxLineBytes cuts longer lines (minified code, data) so one line cannot
	// flood the output; Line.Cut marks them.
	MaxLineBytes = 4096
	// binarySniff is how much of a file is checked for a NUL byte, as git does.
	binarySniff = 8000
)

// Entry types, as in View.Type and Entry.Type.
const (
	File      = "file"
	Dir       = "dir"
	Symlink   = "symlink"
	Submodule = "submodule"
)

// View is one path of a target at its pin. Type says which fields are set:
// a file has Size, Binary and (unless binary) TotalLines, Offset, Lines and
// Truncated; a dir has Entries; a symlink has LinkTarget; a submodule has
// Commit.
type View struct {
	Target    string `json:"target"`
	Pin       string `json:"pin"`
	PinCommit string `json:"pin_commit"`
	Path      string `json:"path"`      // relative to the target's path; "." is its root
	RepoPath  string `json:"repo_path"` // relative to the repository's top level
	Type      string `json:"type"`

	Size       int64  `json:"size,omitempty"`
	Binary     bool   `json:"binary,omitempty"`
	TotalLines int    `json:"total_lines,omitempty"` // always present for a text file`
	Offset     int    `json:"offset,omitempty"`      // number of the first line in Lines (1-based)
	Lines      []Line `json:"lines,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`   // lines follow the last one shown; always present for a text file
	NextOffset int    `json:"next_offset,omitempty"` // pass as offset to continue, when Truncated

	Entries    []Entry `json:"entries,omitempty"`
	LinkTarget string  `json:"link_target,omitempty"`
	Commit     string  `json:"commit,omitempty"`
}

// MarshalJSON writes total_lines and truncated for every text file, even
// when zero or false, and leaves them out for everything else.
func (v View) MarshalJSON() ([]byte, error) {
	type plain View
	var out any = plain(v)
	if v.Type == File && !v.Binary {
		out = struct {
			plain
			TotalLines int  `json:"total_lines"`
			Truncated  bool `json:"truncated"`
		}{plain(v), v.TotalLines, v.Truncated}
	}
	// Source text is full of <, > and &: keep it readable, not \u003c.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Line is one numbered line of a file, without its newline.
type Line struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
	Cut    bool   `json:"cut,omitempty"` // Text holds only the first MaxLineBytes bytes
}

// Entry is one child of a directory. Size is set for files.
type Entry struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Size       int64  `json:"size,omitempty"`
	Executable bool   `json:"executable,omitempty"`
}

// Read returns the view of relPath (relative to the target's path; "" for its
// root) at the target's pin. For a file, offset is the 1-based number of the
// first line to show (0 means 1) and limit the most lines to show (0 means
// DefaultLimit). Errors: Usage for a negative offset or limit, Policy for a
// path that leaves the target or names .git, NotFound for an unknown target or
// a path absent at the pin, Invalid for a pin that does not resolve.
func Read(ctx context.Context, ws *workspace.Workspace, targetName, relPath string, offset, limit int) (*View, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if offset < 0 || limit < 0 {
		return nil, errs.Usagef("offset and limit must not be negative (got %d and %d)", offset, limit)
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultLimit
	}
	t, err := ws.Target(targetName)
	if err != nil {
		return nil, err
	}
	parts, err := cleanPath(relPath)
	if err != nil {
		return nil, err
	}
	pin, err := ws.ResolvePin(ctx, t)
	if err != nil {
		return nil, err
	}
	store := ws.Store("")
	commit, err := store.ReadCommit(repo.NewHash(pin))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read pin commit %s of target %q", pin, t.Name)
	}
	tree, err := readTree(store, commit.Tree)
	if err != nil {
		return nil, err
	}
	v := &View{Target: t.Name, Pin: t.Pin, PinCommit: pin, Path: strings.Join(parts, "/")}
	if v.Path == "" {
		v.Path = "."
	}
	v.RepoPath = path.Join(t.Path, v.Path)
	r := &reader{store: store, view: v}

	rootTree, err := r.targetTree(tree, t, pin)
	if err != nil {
		return nil, err
	}
	if rel, ok := r.repoRelative(rootTree, targetSegments(t.Path), parts); ok {
		parts = rel
		v.Path = strings.Join(parts, "/")
		if v.Path == "" {
			v.Path = "."
		}
		v.RepoPath = path.Join(t.Path, v.Path)
	}
	if len(parts) == 0 {
		return r.dir(rootTree)
	}
	e, err := r.walk(rootTree, parts, func(at string) error {
		return errs.NotFoundf("%s does not exist in target %q at pin %s (%s)", at, t.Name, t.Pin, git.Short(pin))
	})
	if err != nil {
		return nil, err
	}
	switch e.Mode {
	case repo.ModeDir:
		sub, err := readTree(store, e.Hash)
		if err != nil {
			return nil, err
		}
		return r.dir(sub)
	case repo.ModeSymlink:
		v.Type = Symlink
		b, err := r.blob(e.Hash)
		if err != nil {
			return nil, err
		}
		v.LinkTarget = string(b)
		return v, nil
	case repo.ModeSubmodule:
		v.Type, v.Commit = Submodule, e.Hash.String()
		return v, nil
	}
	return r.file(e.Hash, offset, limit)
}

// targetTree is the tree of the target's path at the pin, which must be a
// real directory there: a symlink would show files from outside the
// target. A target at the top level is the whole tree.
func (r *reader) targetTree(tree []repo.TreeEntry, t *workspace.Target, pin string) ([]repo.TreeEntry, error) {
	segs := targetSegments(t.Path)
	if len(segs) == 0 {
		return tree, nil
	}
	root, err := r.walk(tree, segs, func(at string) error {
		return errs.NotFoundf("target %q: its path %q does not exist at pin %s (%s); check targets.%s.path and pin in hone.toml", t.Name, t.Path, t.Pin, git.Short(pin), t.Name)
	})
	if err != nil {
		return nil, err
	}
	if root.Mode != repo.ModeDir {
		return nil, errs.Policyf("target %q: %q is not a directory at pin %s (%s) but a %s; hone does not follow it", t.Name, t.Path, t.Pin, git.Short(pin), typeOf(root.Mode))
	}
	return readTree(r.store, root.Hash)
}

// readTree reads tree h with hone's error kind.
func readTree(s repo.Store, h repo.Hash) ([]repo.TreeEntry, error) {
	t, err := s.ReadTree(h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read tree %s", h)
	}
	return t, nil
}

// targetSegments splits a target's path; none for the top level.
func targetSegments(p string) []string {
	if p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// repoRelative reads parts as a path from the repository's top level, the
// form hone prints (profile show's targets/wordfreq/wordfreq.c), when it
// starts with the target's path and names nothing as a path inside the
// target. It returns the path inside the target.
func (r *reader) repoRelative(root []repo.TreeEntry, targetPath, parts []string) ([]string, bool) {
	if len(parts) < len(targetPath) || !slices.Equal(parts[:len(targetPath)], targetPath) {
		return nil, false
	}
	if _, err := r.walk(root, parts, func(string) error { return repo.ErrNoEntry }); err == nil {
		return nil, false
	}
	return parts[len(targetPath):], true
}

type reader struct {
	store repo.Store
	view  *View
}

// walk follows parts from tree and returns the last entry. Every component
// before the last must be a directory; a symlink or submodule on the way is
// refused rather than followed. missing builds the error for an absent path.
func (r *reader) walk(tree []repo.TreeEntry, parts []string, missing func(at string) error) (*repo.TreeEntry, error) {
	for i, name := range parts {
		var found *repo.TreeEntry
		for j := range tree {
			if tree[j].Name == name {
				found = &tree[j]
				break
			}
		}
		at := strings.Join(parts[:i+1], "/")
		if found == nil {
			return nil, missing(at)
		}
		if i == len(parts)-1 {
			return found, nil
		}
		if found.Mode != repo.ModeDir {
			if found.Mode == repo.ModeSymlink || found.Mode == repo.ModeSubmodule {
				return nil, errs.Policyf("%s is a %s at the pin; the source view does not follow it out of the target", at, typeOf(found.Mode))
			}
			return nil, missing(at + "/" + parts[i+1])
		}
		sub, err := readTree(r.store, found.Hash)
		if err != nil {
			return nil, err
		}
		tree = sub
	}
	return nil, missing(".")
}

func (r *reader) dir(tree []repo.TreeEntry) (*View, error) {
	v := r.view
	v.Type = Dir
	v.Entries = make([]Entry, 0, len(tree))
	for _, e := range tree {
		ent := Entry{Name: e.Name, Type: typeOf(e.Mode), Executable: e.Mode == repo.ModeExecutable}
		if ent.Type == File {
			size, err := r.store.ObjectSize(repo.BlobObject, e.Hash)
			if err != nil {
				return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", e.Hash)
			}
			ent.Size = size
		}
		v.Entries = append(v.Entries, ent)
	}
	return v, nil
}

func (r *reader) blob(h repo.Hash) ([]byte, error) {
	b, err := r.store.ReadObject(repo.BlobObject, h)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", h)
	}
	return b, nil
}

// file reads the blob and keeps only the lines asked for in the view.
func (r *reader) file(h repo.Hash, offset, limit int) (*View, error) {
	v := r.view
	v.Type = File
	b, err := r.blob(h)
	if err != nil {
		return nil, err
	}
	v.Size = int64(len(b))
	br := bufio.NewReaderSize(bytes.NewReader(b), 64<<10)
	head, _ := br.Peek(binarySniff)
	if bytes.IndexByte(head, 0) >= 0 {
		v.Binary = true
		return v, nil
	}
	v.Offset = offset
	for n := 1; ; n++ {
		line, cut, err := readLine(br, n >= offset && n < offset+limit)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot read blob %s", h)
		}
		v.TotalLines = n
		if n >= offset && n < offset+limit {
			v.Lines = append(v.Lines, Line{Number: n, Text: line, Cut: cut})
		}
	}
	if last := offset + limit - 1; v.TotalLines > last {
		v.Truncated, v.NextOffset = true, last+1
	}
	return v, nil
}

// readLine reads one line without its "\n". It returns io.EOF only when no
// byte is left, so a last line without a newline still counts. When keep is
// false the text is discarded; when kept it is cut at MaxLineBytes.
func readLine(br *bufio.Reader, keep bool) (string, bool, error) {
	var buf []byte
	read := false
	for {
		chunk, err := br.ReadSlice('\n')
		read = read || len(chunk) > 0
		if keep && len(buf) <= MaxLineBytes {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !(errors.Is(err, io.EOF) && read) {
			return "", false, err
		}
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		if len(buf) > MaxLineBytes {
			return string(buf[:MaxLineBytes]), true, nil
		}
		return string(buf), false, nil
	}
}

func typeOf(m repo.Mode) string {
	switch m {
	case repo.ModeDir:
		return Dir
	case repo.ModeSymlink:
		return Symlink
	case repo.ModeSubmodule:
		return Submodule
	}
	return File
}
