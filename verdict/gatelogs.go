package verdict

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
	// Cut reports a stream longer than [ledger] gate_log_size, or cut to
	// keep the verdict's logs within [ledger] verdict_log_size: its start
	// and its end are kept, with a line saying how much was cut between.
	Cut bool `json:"cut,omitempty"`
}

// gateLogs gathers what one verdict stores of its runs' output.
type gateLogs struct {
	cap int // bytes kept of each stream ([ledger] gate_log_size)
	// stored bounds the archive the shared ledger gets, compressed
	// ([ledger] verdict_log_size): a stream the cap keeps whole can still
	// be random bytes gzip cannot shrink, and a verdict runs many gates.
	stored int64
	// keep is the folder of hone's state where the machine that judged
	// keeps an archive the bound cut, whole.
	keep  string
	files []LogFile
}

// WholeLogsDir is the folder of hone's state directory (.git/hone) where a
// verdict's logs are kept whole when [ledger] verdict_log_size cut what
// the ledger stores.
const WholeLogsDir = "logs"

// newGateLogs keeps capBytes of each stream; until storedWithin bounds
// the archive too, it is stored whole.
func newGateLogs(capBytes int64) *gateLogs {
	return &gateLogs{cap: int(capBytes), stored: math.MaxInt64}
}

// storedWithin bounds the archive the ledger gets to limit bytes,
// compressed, keeping it whole under keep when it is cut.
func (l *gateLogs) storedWithin(limit int64, keep string) *gateLogs {
	l.stored, l.keep = limit, keep
	return l
}

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

// attachments is the logs as the attachment list of the entry's Append,
// named by name (the verdict's started entry), and, when the archive had
// to be cut to [ledger] verdict_log_size, a sentence for the verdict's
// detail saying so and where the whole archive is kept.
func (l *gateLogs) attachments(name string) ([]ledger.Attachment, string, error) {
	if l == nil || len(l.files) == 0 {
		return nil, "", nil
	}
	whole, err := archive(l.files, nil)
	if err != nil {
		return nil, "", err
	}
	if int64(len(whole)) <= l.stored {
		return []ledger.Attachment{{Name: LogsAttachment, Data: whole}}, "", nil
	}
	file := name + "." + LogsAttachment
	where := "is kept whole by the machine that judged it, in .git/hone/" + WholeLogsDir + "/" + file
	if err := keepWhole(filepath.Join(l.keep, file), whole); err != nil {
		where = "could not be kept whole (" + err.Error() + ")"
	}
	cut, err := l.fit(len(whole), where)
	if err != nil {
		return nil, "", err
	}
	note := fmt.Sprintf("Its logs (%d bytes compressed) were cut to [ledger] verdict_log_size (%d bytes) for the ledger; the archive %s.", len(whole), l.stored, where)
	if cut == nil {
		return nil, note, nil
	}
	return []ledger.Attachment{{Name: LogsAttachment, Data: cut}}, note, nil
}

// fit returns the archive with every stream cut to one share of its
// length, its start and its end kept around a mark, the largest share
// found whose archive weighs at most l.stored (gzip shrinks each share
// differently, so the share is found by trying); nil when even the marks
// alone weigh more.
func (l *gateLogs) fit(size int, where string) ([]byte, error) {
	share := float64(l.stored) / float64(size)
	for range 12 {
		data, err := archive(l.files, &cutTo{share: share, where: where, limit: l.stored})
		if err != nil || int64(len(data)) <= l.stored {
			return data, err
		}
		share *= 0.9 * float64(l.stored) / float64(len(data))
	}
	data, err := archive(l.files, &cutTo{where: where, limit: l.stored})
	if err != nil || int64(len(data)) > l.stored {
		return nil, err
	}
	return data, nil
}

// cutTo is the share of each stream an archive keeps.
type cutTo struct {
	share float64
	where string
	limit int64
}

// apply keeps c's share of data: its start and its end, half each, around a
// line marking the cut; a stream no longer than its share and the mark
// stays whole.
func (c *cutTo) apply(data []byte) ([]byte, bool) {
	if c == nil {
		return data, false
	}
	keep := int(c.share * float64(len(data)))
	mark := fmt.Sprintf("\n[hone: %d bytes cut here: [ledger] verdict_log_size keeps %d bytes of this verdict's logs on the ledger; the archive %s]\n", len(data)-keep, c.limit, c.where)
	if keep+len(mark) >= len(data) {
		return data, false
	}
	head, tail := data[:keep/2], data[len(data)-(keep-keep/2):]
	return append(append(append([]byte{}, head...), mark...), tail...), true
}

// archive packs files, each cut by cut (nil: whole), into a gzipped tar.
func archive(files []LogFile, cut *cutTo) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, shortened := cut.apply(f.Data)
		data = []byte(safetext.Log(string(data)))
		hdr := &tar.Header{Name: f.Gate + "/" + f.Name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if f.Cut || shortened {
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
	return buf.Bytes(), nil
}

// keepWhole writes an archive the ledger only gets cut, for whoever
// reads the judging machine's state; a reader never sees half a file.
func keepWhole(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	trimWholeLogs(filepath.Dir(path), maxWholeLogs)
	return nil
}

// maxWholeLogs bounds the folder of whole logs: a runner judging floods
// of candidates that print noise would otherwise fill its disk with
// archives the ledger already holds cut.
const maxWholeLogs = 512 << 20

// trimWholeLogs removes the oldest archives of dir until the rest weigh at
// most limit bytes, always keeping the newest. It only makes room, so an
// archive it cannot stat or remove (another verdict's, removed at once) is
// passed over.
func trimWholeLogs(dir string, limit int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type kept struct {
		path string
		size int64
		mod  time.Time
	}
	var all []kept
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && strings.HasSuffix(e.Name(), "."+LogsAttachment) {
			all = append(all, kept{filepath.Join(dir, e.Name()), info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b kept) int { return b.mod.Compare(a.mod) })
	var total int64
	for i, k := range all {
		total += k.size
		if i > 0 && total > limit {
			os.Remove(k.path)
		}
	}
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
