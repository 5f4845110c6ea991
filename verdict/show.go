package verdict

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// Shown is a stored verdict and, when one was asked for, a gate's stored
// logs.
type Shown struct {
	Entry *Entry
	// Gate is the gate asked for, as the verdict recorded it; Files are
	// its stored streams and differential case, in the order stored.
	Gate  *GateResult
	Files []LogFile
	// Config is the gate as hone.toml defines it now, for the commands
	// that reproduce a differential case; nil when it is gone.
	Config *workspace.Gate
}

// Show reads a verdict by its entry id, or the latest verdict of a patch
// by the patch's id (either may be a unique prefix), with gate's stored
// logs when gate is not "".
func Show(ctx context.Context, ws *workspace.Workspace, id, gate string) (*Shown, error) {
	l := ledger.Open(ws)
	s, err := verdictEntry(ctx, l, id)
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := s.Decode(&e); err != nil {
		return nil, err
	}
	// Anyone may push an entry: show what it says, never what its bytes
	// would do to a terminal.
	safetext.Strings(&e)
	sh := &Shown{Entry: &e}
	if gate == "" {
		return sh, nil
	}
	var names []string
	for i := range e.Gates {
		names = append(names, e.Gates[i].Name)
		if e.Gates[i].Name == gate {
			sh.Gate = &e.Gates[i]
		}
	}
	if sh.Gate == nil {
		return nil, errs.NotFoundf("verdict %s ran no gate %q; it ran %s", e.ID, gate, strings.Join(names, ", "))
	}
	if t, err := ws.Target(e.Target); err == nil {
		for i := range t.Gates {
			if t.Gates[i].Name == gate {
				sh.Config = &t.Gates[i]
			}
		}
	}
	if e.Logs == "" {
		return sh, nil
	}
	archive, err := l.Attachment(ctx, s, e.Logs)
	if err != nil {
		return nil, err
	}
	sh.Files, err = readLogs(archive, gate)
	for i := range sh.Files {
		sh.Files[i].Data = []byte(safetext.Log(string(sh.Files[i].Data)))
	}
	return sh, err
}

// verdictEntry finds the verdict id names: an entry id, or a patch id
// whose latest verdict it is.
func verdictEntry(ctx context.Context, l *ledger.Ledger, id string) (*ledger.Stored, error) {
	s, err := l.Get(ctx, id)
	if err == nil && s.Kind == ledger.KindVerdict {
		return s, nil
	}
	if err != nil && !errs.Is(err, errs.NotFound) {
		return nil, err
	}
	patch := ""
	if s != nil {
		patch = s.PatchID
	} else if patch, err = l.ResolvePatch(ctx, id); err != nil {
		if errs.Is(err, errs.NotFound) {
			return nil, errs.NotFoundf("no verdict or patch %q in the ledger; see `hone ledger list --kind verdict`", id)
		}
		return nil, err
	}
	if patch == "" {
		return nil, errs.Invalidf("entry %s is a %s entry, not a verdict", s.ID, s.Kind)
	}
	all, err := l.ByPatch(ctx, patch)
	if err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Kind == ledger.KindVerdict {
			return all[i], nil
		}
	}
	return nil, errs.NotFoundf("patch %s has no verdict yet; run `hone verdict %s`", patch, patch)
}

// File returns the stored file name of the shown gate, or NotFound naming
// the ones there are.
func (sh *Shown) File(name string) (*LogFile, error) {
	var names []string
	for i := range sh.Files {
		if sh.Files[i].Name == name {
			return &sh.Files[i], nil
		}
		names = append(names, sh.Files[i].Name)
	}
	if len(names) == 0 {
		return nil, errs.NotFoundf("verdict %s stored no output of gate %q", sh.Entry.ID, sh.Gate.Name)
	}
	return nil, errs.NotFoundf("gate %q of verdict %s has no stored file %q; it has %s", sh.Gate.Name, sh.Entry.ID, name, strings.Join(names, ", "))
}

// WriteShowText writes a verdict and, with a gate, the gate's account,
// its first mismatch with the commands that reproduce it, and every
// stored stream whole.
func WriteShowText(w io.Writer, sh *Shown) error {
	if err := WriteText(w, sh.Entry); err != nil {
		return err
	}
	g := sh.Gate
	if g == nil {
		return nil
	}
	fmt.Fprintf(w, "\ngate %s: %s\n", g.Name, strings.TrimPrefix(gateWord(*g), g.Name+" "))
	if g.Message != "" {
		fmt.Fprintf(w, "  %s\n", g.Message)
	}
	for _, side := range []struct {
		name string
		ri   *RunInfo
	}{{"candidate", g.Candidate}, {"baseline", g.Baseline}} {
		if side.ri != nil {
			fmt.Fprintf(w, "  %s: %s\n", side.name, runWords(side.ri))
		}
	}
	if d := g.Differential; d != nil {
		writeCase(w, sh, d)
	}
	if len(sh.Files) == 0 {
		_, err := fmt.Fprintf(w, "\nno output of gate %s is stored with this verdict\n", g.Name)
		return err
	}
	for _, f := range sh.Files {
		cut := ""
		if f.Cut {
			cut = ", cut where marked"
		}
		fmt.Fprintf(w, "\n--- %s/%s (%d bytes%s) ---\n", f.Gate, f.Name, len(f.Data), cut)
		text := strings.ToValidUTF8(string(f.Data), "\uFFFD")
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
		if !strings.HasSuffix(text, "\n") && text != "" {
			fmt.Fprintln(w)
		}
	}
	return nil
}

func runWords(ri *RunInfo) string {
	s := fmt.Sprintf("exit status %d", ri.ExitCode)
	switch {
	case ri.TimedOut:
		s = "timed out"
	case ri.Signaled:
		s = "killed by a signal"
	}
	s += fmt.Sprintf(", %.2fs", ri.WallSeconds)
	if ri.Sanitizer != nil {
		s += "; " + ri.Sanitizer.String()
	} else if ri.FailureLine != "" {
		s += "; " + ri.FailureLine
	}
	return s
}

func writeCase(w io.Writer, sh *Shown, d *Differential) {
	fmt.Fprintf(w, "  %d of %d inputs compared, from the verdict's input seed %d\n", d.Compared, d.Seeds, d.Seed)
	m := d.Mismatch
	if m == nil {
		return
	}
	again := "reproduced when run again alone"
	if !m.Reproduced {
		again = "NOT reproduced when run again alone"
	}
	fmt.Fprintf(w, "\nfirst mismatch: input %d, HONE_SEED=%d (%d bytes, sha256 %s); %s\n  %s\n", m.Index, m.Seed, m.InputBytes, m.InputSHA256, again, m.Difference)
	fmt.Fprintf(w, "  exit status: baseline %d, candidate %d\n", m.BaselineExit, m.CandidateExit)
	fmt.Fprintf(w, "the input as stored:\n  hone verdict show %s --gate %s --file case.input > input\n", sh.Entry.ID, sh.Gate.Name)
	if c := sh.Config; c != nil {
		fmt.Fprintf(w, "or made again, in the target's folder of the pin, with its build's HONE_OUT:\n  HONE_SEED=%d sh -c %s > input\n", m.Seed, jail.Quote(c.Generate))
		fmt.Fprintf(w, "then, on each side's build (hone verdict --keep keeps both):\n  sh -c %s < input\n", jail.Quote(c.Run))
	}
}
