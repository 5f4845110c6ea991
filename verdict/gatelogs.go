package verdict

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/safetext"
	"github.com/hone-perf/hone/ledger"
)

// LogsAttachment names the attachment beside a verdict entry that holds the
// full output of its builds, gates and failed bench run: a gzipped tar with
// one file per stream, <gate>/<side>.stdout and <gate>/<side>.stderr, and a
// differential gate's first mismatch as <gate>/case.*. Plain git reads it:
//
//	git show hone/ledger:<entry path without .toml>.gates.tar.gz | tar -xzO unit/candidate.stderr
const LogsAttachment = "gates.tar.gz"

// LogFile is one stored stream, or one part of a differential case.
type LogFile struct {
	Gate string `json:"gate"`
	Name string `json:"name"` // "candidate.stderr", "case.input", ...
	Data []byte `json:"-"`
	// Cut reports a stream longer than [ledger] gate_log_size: its start
	// and its end are kept, with a line saying how much was cut between.
	Cut bool `json:"cut,omitempty"`
}

// gateLogs gathers what one verdict stores of its runs' output.
type gateLogs struct {
	cap   int // bytes kept of each stream
	files []LogFile
}

func newGateLogs(capBytes int64) *gateLogs { return &gateLogs{cap: int(capBytes)} }

// add keeps both streams of one side's run of a gate (or of the build, or
// the bench); an empty stream is not stored.
func (l *gateLogs) add(gate, side string, res *jail.Result) {
	if l == nil || res == nil {
		return
	}
	for _, s := range []struct {
		name string
		out  *jail.Output
	}{{side + ".stdout", &res.Stdout}, {side + ".stderr", &res.Stderr}} {
		if s.out.Len() > 0 {
			data, cut := kept(s.out, l.cap)
			l.files = append(l.files, LogFile{Gate: gate, Name: s.name, Data: data, Cut: cut})
		}
	}
}

// addFile keeps data as it is, cut to the cap.
func (l *gateLogs) addFile(gate, name string, data []byte) {
	if l == nil {
		return
	}
	cut := len(data) > l.cap
	if cut {
		data = append(append([]byte{}, data[:l.cap]...), fmt.Sprintf("\n[hone: %d bytes cut here; [ledger] gate_log_size keeps %d]\n", len(data)-l.cap, l.cap)...)
	}
	l.files = append(l.files, LogFile{Gate: gate, Name: name, Data: data, Cut: cut})
}

// kept is what a verdict stores of a stream the jail captured with
// OutputCap set to the cap: all of it, or its start and its last bytes
// with a line marking the cut.
func kept(o *jail.Output, limit int) ([]byte, bool) {
	head := o.Bytes()
	if len(head) > limit {
		head = head[:limit]
	}
	missing := o.Len() - int64(len(head))
	if missing <= 0 {
		return head, false
	}
	tail := o.Tail(8 << 10)
	if missing <= int64(len(tail)) {
		return append(append([]byte{}, head...), tail[int64(len(tail))-missing:]...), false
	}
	mark := fmt.Sprintf("\n[hone: %d bytes cut here; the stream was %d bytes and [ledger] gate_log_size keeps %d of its start and its last %d]\n",
		missing-int64(len(tail)), o.Len(), limit, len(tail))
	return append(append(append([]byte{}, head...), mark...), tail...), true
}

// attachments is the logs as the attachment list of the entry's Append.
func (l *gateLogs) attachments() ([]ledger.Attachment, error) {
	if l == nil || len(l.files) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range l.files {
		data := []byte(safetext.Log(string(f.Data)))
		hdr := &tar.Header{Name: f.Gate + "/" + f.Name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if f.Cut {
			hdr.PAXRecords = map[string]string{paxCut: "1"}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot archive the gate logs")
		}
		if _, err := tw.Write(data); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot archive the gate logs")
		}
	}
	if err := tw.Close(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot archive the gate logs")
	}
	if err := gz.Close(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot compress the gate logs")
	}
	return []ledger.Attachment{{Name: LogsAttachment, Data: buf.Bytes()}}, nil
}

// paxCut marks, in a file's tar header, a stream cut to the cap.
const paxCut = "HONE.cut"

// maxLogArchive bounds what reading a stored archive may expand to: the
// ledger is shared, and an entry could be forged.
const maxLogArchive = 1 << 30

// readLogs unpacks a stored archive: the files of gate, in stored order
// ("" for all).
func readLogs(archive []byte, gate string) ([]LogFile, error) {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "the stored gate logs are not gzip data")
	}
	tr := tar.NewReader(io.LimitReader(gz, maxLogArchive))
	var out []LogFile
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, err, "the stored gate logs are not a tar archive")
		}
		g, name, ok := strings.Cut(hdr.Name, "/")
		if !ok || hdr.Typeflag != tar.TypeReg || path.Clean(hdr.Name) != hdr.Name || strings.Contains(name, "/") {
			return nil, errs.Invalidf("the stored gate logs hold %.80q, which is not <gate>/<file>", hdr.Name)
		}
		if gate != "" && g != gate {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, err, "cannot read %s from the stored gate logs", hdr.Name)
		}
		out = append(out, LogFile{Gate: g, Name: name, Data: data, Cut: hdr.PAXRecords[paxCut] == "1"})
	}
}
