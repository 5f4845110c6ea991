package ledger

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/hone-perf/hone/internal/repo"
)

// notePrefix starts every note line hone writes; lines without it belong to
// whoever else annotates patch commits and are left alone.
const notePrefix = "hone-verdict "

// NoteLine is the one line a verdict entry adds to the note on its patch
// commit: "hone-verdict <entry-id> <verdict> patch=<patch-id> <summary>".
// One line per verdict keeps `git notes merge -s cat_sort_uniq` correct.
func NoteLine(c *Common) string {
	line := fmt.Sprintf("%s%s %s patch=%s %s", notePrefix, c.ID, c.Verdict, c.PatchID, strings.Join(strings.Fields(c.Summary), " "))
	return strings.TrimRight(line, " ")
}

// noteEntryID returns the entry id a hone note line names.
func noteEntryID(line string) (string, bool) {
	rest, ok := strings.CutPrefix(line, notePrefix)
	if !ok {
		return "", false
	}
	id, _, _ := strings.Cut(rest, " ")
	return id, true
}

// addNote appends the verdict's line to the note on its patch commit, in one
// commit on the notes ref, moved by compare-and-swap like the branch. A note
// that already holds the line is left as it is, so repair can call it again.
func (l *Ledger) addNote(ctx context.Context, s *Stored) error {
	line := NoteLine(&s.Common)
	_, err := repo.UpdateRef(ctx, l.refs, l.ws.Config.Ledger.NotesRef, func(tip plumbing.Hash, ok bool) (plumbing.Hash, error) {
		tree, err := l.obj.commitTree(tip)
		if err != nil {
			return tip, err
		}
		p, blob, found, err := l.findNote(tree, s.Commit)
		if err != nil {
			return tip, err
		}
		var text string
		if found {
			b, err := l.obj.readBlob(blob)
			if err != nil {
				return tip, err
			}
			text = string(b)
			if hasLine(text, line) {
				return tip, nil
			}
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
		}
		h, err := l.obj.writeBlob([]byte(text + line + "\n"))
		if err != nil {
			return tip, err
		}
		if tree, err = l.obj.insert(tree, []file{{path: p, hash: h, replace: true}}); err != nil {
			return tip, err
		}
		var parents []plumbing.Hash
		if ok {
			parents = []plumbing.Hash{tip}
		}
		return l.obj.commit(ctx, tree, parents, fmt.Sprintf("hone: note for verdict %s\n", s.ID), l.sig(), "")
	})
	return err
}

func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// findNote locates the note on commit in a notes tree, whichever fan-out git
// or hone gave it ("<40hex>", "<2>/<38>", "<2>/<2>/<36>"). When there is none
// it returns the path a new note should take: fanned out once the tree is
// large or already fanned out, as git itself does.
func (l *Ledger) findNote(tree plumbing.Hash, commit string) (path string, blob plumbing.Hash, found bool, err error) {
	h, dir, prefix := tree, "", ""
	for depth := 0; depth < 3; depth++ {
		entries, err := l.obj.tree(h)
		if err != nil {
			return "", plumbing.ZeroHash, false, err
		}
		rest := commit[len(prefix):]
		next := plumbing.ZeroHash
		fanned := len(entries) >= 256
		for _, e := range entries {
			if e.Mode != filemode.Dir && e.Name == rest {
				return dir + rest, e.Hash, true, nil
			}
			if e.Mode == filemode.Dir && len(e.Name) == 2 {
				fanned = true
				if e.Name == rest[:2] {
					next = e.Hash
				}
			}
		}
		if next.IsZero() {
			if fanned {
				return dir + rest[:2] + "/" + rest[2:], plumbing.ZeroHash, false, nil
			}
			return dir + rest, plumbing.ZeroHash, false, nil
		}
		h, dir, prefix = next, dir+rest[:2]+"/", prefix+rest[:2]
	}
	return dir + commit[len(prefix):], plumbing.ZeroHash, false, nil
}

// note is one annotated object's note in a notes tree.
type note struct {
	path string
	blob plumbing.Hash
}

// readNotes maps each annotated object id to its note, across any fan-out.
// Files whose path does not spell an object id are not notes and are skipped.
func (l *Ledger) readNotes(tree plumbing.Hash) (map[string]note, error) {
	files, err := listFiles(l.obj, tree, "")
	if err != nil {
		return nil, err
	}
	out := make(map[string]note, len(files))
	for _, f := range files {
		id := strings.ReplaceAll(f.path, "/", "")
		if isHex40(id) {
			out[id] = note{f.path, f.hash}
		}
	}
	return out, nil
}

// unionNote is cat_sort_uniq: the sorted, de-duplicated lines of both notes.
func unionNote(a, b string) string {
	set := map[string]bool{}
	for _, t := range []string{a, b} {
		for _, line := range strings.Split(t, "\n") {
			if line != "" {
				set[line] = true
			}
		}
	}
	lines := make([]string, 0, len(set))
	for line := range set {
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
