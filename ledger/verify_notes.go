package ledger

import (
	"context"
	"strings"
)

// verifyNotes checks that the hone lines of the notes equal the verdict
// entries: each verdict has its line on its patch commit, and each hone line
// names a verdict entry on that commit and says what the entry says.
func (l *Ledger) verifyNotes(entries map[string]*Stored, rep *VerifyReport) error {
	tip, _, err := l.refs.Read(l.ws.Config.Ledger.NotesRef)
	if err != nil {
		rep.add(ProblemUnreadableRef, l.ws.Config.Ledger.NotesRef, "%v", err)
		return nil
	}
	tree, err := l.obj.commitTree(tip)
	if err != nil {
		return err
	}
	notes, err := l.readNotes(tree)
	if err != nil {
		return err
	}
	found := map[string]bool{} // entry ids whose exact line was seen on their commit
	for commit, n := range notes {
		b, err := l.obj.readBlob(n.blob)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			id, ok := noteEntryID(line)
			if !ok {
				continue
			}
			rep.Notes++
			s := entries[id]
			switch {
			case s == nil || s.Kind != KindVerdict:
				rep.add(ProblemOrphanNote, "notes:"+n.path, "note line %q names no verdict entry", line)
			case s.Commit != commit:
				rep.add(ProblemNoteMismatch, "notes:"+n.path, "note line for verdict %s is on %s, but the entry's patch commit is %s", id, commit, s.Commit)
			case line != NoteLine(&s.Common):
				rep.add(ProblemNoteMismatch, "notes:"+n.path, "note line %q disagrees with entry %s, which says %q", line, s.Path, NoteLine(&s.Common))
			default:
				found[id] = true
			}
		}
	}
	for _, s := range sortedEntries(entries) {
		if s.Kind == KindVerdict && !found[s.ID] {
			rep.add(ProblemMissingNote, s.Path, "verdict %s has no note line on %s; `hone ledger verify --repair` adds it", s.ID, s.Commit)
			rep.missingNotes = append(rep.missingNotes, s)
		}
	}
	return nil
}

// RepairNotes adds the note line of every verdict entry that lacks one, which
// is what a hone process killed between storing a verdict and noting it
// leaves behind. It never touches entries, and it returns how many lines it
// added. Other problems are left for a person to look at.
func (l *Ledger) RepairNotes(ctx context.Context) (int, error) {
	rep, err := l.Verify(ctx, VerifyOptions{Repair: true})
	if err != nil {
		return 0, err
	}
	for i, s := range rep.missingNotes {
		if err := l.addNote(ctx, s); err != nil {
			return i, err
		}
	}
	return len(rep.missingNotes), nil
}
