package profile

import (
	"bytes"
	"strconv"
)

// ScriptFields is the -F list hone passes to `perf script`. The parser also
// accepts output with comm, cpu or other leading fields, and samples printed
// without a callchain (the ip on the header line).
const ScriptFields = "pid,tid,time,period,event,ip,sym,symoff,dso"

// scriptLine classifies one line of `perf script` output.
type lineKind int

const (
	lineBlank  lineKind = iota
	lineHeader          // "pid/tid time: period event:" starting a sample
	lineFrame           // "\t ip sym+0xoff (dso)": one callchain entry
	lineMmap            // a PERF_RECORD_MMAP or MMAP2 event (--show-mmap-events)
	lineOther           // any other side-band record; ignored
)

func classify(line []byte) lineKind {
	if len(bytes.TrimSpace(line)) == 0 {
		return lineBlank
	}
	if line[0] == '\t' {
		return lineFrame
	}
	if i := bytes.Index(line, []byte("PERF_RECORD_")); i >= 0 {
		if bytes.HasPrefix(line[i:], []byte("PERF_RECORD_MMAP")) {
			return lineMmap
		}
		return lineOther
	}
	return lineHeader
}

// header is the parsed first line of a sample.
type header struct {
	pid    int
	period uint64
	event  []byte // a sub-slice of the line; copy before keeping
	rest   []byte // text after the event: a frame when there is no callchain
}

// parseHeader reads "[comm] pid/tid [cpu] [time:] [period] event: [ip sym (dso)]".
// comm may contain spaces, so the pid/tid token is found by its shape.
func parseHeader(line []byte) (header, bool) {
	var h header
	toks := fieldsIndex(line)
	i := 0
	for ; i < len(toks); i++ {
		if pid, ok := pidTid(line[toks[i][0]:toks[i][1]]); ok {
			h.pid = pid
			break
		}
	}
	if i == len(toks) {
		return h, false
	}
	h.period = 1
	for i++; i < len(toks); i++ {
		t := line[toks[i][0]:toks[i][1]]
		if t[0] == '[' { // [cpu]
			continue
		}
		if t[len(t)-1] == ':' {
			body := t[:len(t)-1]
			if isTime(body) {
				continue
			}
			h.event = body
			h.rest = bytes.TrimSpace(line[toks[i][1]:])
			return h, true
		}
		if n, err := strconv.ParseUint(string(t), 10, 64); err == nil {
			h.period = n
			continue
		}
		return h, false
	}
	return h, false
}

func isTime(b []byte) bool {
	dot := false
	for _, c := range b {
		switch {
		case c == '.' && !dot:
			dot = true
		case c < '0' || c > '9':
			return false
		}
	}
	return dot
}

// pidTid parses "123/456" (pid/tid) and returns the pid.
func pidTid(t []byte) (int, bool) {
	slash := bytes.IndexByte(t, '/')
	if slash <= 0 || slash == len(t)-1 {
		return 0, false
	}
	pid, err := strconv.Atoi(string(t[:slash]))
	if err != nil {
		return 0, false
	}
	if _, err := strconv.Atoi(string(t[slash+1:])); err != nil {
		return 0, false
	}
	return pid, true
}

// fieldsIndex returns the [start, end) of each whitespace-separated token.
func fieldsIndex(line []byte) [][2]int {
	var out [][2]int
	start := -1
	for i, c := range line {
		space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
		switch {
		case space && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(line)})
	}
	return out
}

// frame is one callchain entry. sym and dso are sub-slices of the line.
type frame struct {
	ip     uint64
	sym    []byte
	symoff uint64
	dso    []byte
}

// parseFrame reads "ip sym+0xoff (dso)". A symbol may contain spaces (Go's
// "type:.eq.[2]interface {}"), so the dso is taken from the last " (" and the
// offset from the last "+0x". It scans by hand: it runs once per frame line.
func parseFrame(line []byte) (frame, bool) {
	var f frame
	line = bytes.TrimSpace(line)
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		sp = len(line)
	}
	ip, ok := hexBytes(line[:sp])
	if !ok {
		return f, false
	}
	f.ip = ip
	rest := bytes.TrimSpace(line[sp:])
	if n := len(rest); n > 0 && rest[n-1] == ')' {
		if rest[0] == '(' && bytes.IndexByte(rest, ' ') < 0 {
			f.dso = rest[1 : n-1]
			rest = nil
		} else {
			for i := n - 2; i > 0; i-- {
				if rest[i] == '(' && rest[i-1] == ' ' {
					f.dso = rest[i+1 : n-1]
					rest = rest[:i-1]
					break
				}
			}
		}
	}
	for i := len(rest) - 1; i > 2; i-- {
		if rest[i-2] == '+' && rest[i-1] == '0' && rest[i] == 'x' {
			if off, ok := hexBytes(rest[i+1:]); ok {
				f.symoff = off
				rest = rest[:i-2]
			}
			break
		}
	}
	f.sym = rest
	return f, true
}

// hexBytes parses a hexadecimal number without allocating.
func hexBytes(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// mmapEvent is an executable mapping of a file into a process.
type mmapEvent struct {
	pid                int
	start, size, pgoff uint64
	file               string
}

// parseMmap reads a --show-mmap-events line:
//
//	PERF_RECORD_MMAP2 10379/10379: [0x558f77731000(0x1000) @ 0x1000 fe:00 9978583 1126304342]: r-xp /tmp/pe/w
//
// and reports false for non-executable or unparsable mappings.
func parseMmap(line []byte) (mmapEvent, bool) {
	var m mmapEvent
	i := bytes.Index(line, []byte("PERF_RECORD_MMAP"))
	rest := line[i:]
	sp := bytes.IndexByte(rest, ' ')
	if sp < 0 {
		return m, false
	}
	rest = bytes.TrimLeft(rest[sp:], " ")
	colon := bytes.IndexByte(rest, ':')
	if colon < 0 {
		return m, false
	}
	if pid, ok := pidTid(rest[:colon]); ok {
		m.pid = pid
	} else if p, err := strconv.Atoi(string(bytes.SplitN(rest[:colon], []byte("/"), 2)[0])); err == nil {
		m.pid = p // the kernel's "-1/0"
	} else {
		return m, false
	}
	rest = rest[colon+1:]
	lb, rb := bytes.IndexByte(rest, '['), bytes.Index(rest, []byte("]: "))
	if lb < 0 || rb < lb {
		return m, false
	}
	var ok bool
	if m.start, m.size, m.pgoff, ok = parseMmapRange(rest[lb+1 : rb]); !ok {
		return m, false
	}
	tail := bytes.TrimSpace(rest[rb+3:])
	sp = bytes.IndexByte(tail, ' ')
	if sp < 0 || bytes.IndexByte(tail[:sp], 'x') < 0 {
		return m, false
	}
	m.file = string(bytes.TrimSpace(tail[sp:]))
	return m, true
}

// parseMmapRange reads "0xSTART(0xLEN) @ 0xPGOFF ...".
func parseMmapRange(b []byte) (start, size, pgoff uint64, ok bool) {
	open, close := bytes.IndexByte(b, '('), bytes.IndexByte(b, ')')
	at := bytes.Index(b, []byte("@ "))
	if open < 0 || close < open || at < close {
		return 0, 0, 0, false
	}
	var err error
	if start, err = parseHex(b[:open]); err != nil {
		return 0, 0, 0, false
	}
	if size, err = parseHex(b[open+1 : close]); err != nil {
		return 0, 0, 0, false
	}
	off := bytes.TrimSpace(b[at+2:])
	if sp := bytes.IndexByte(off, ' '); sp >= 0 {
		off = off[:sp]
	}
	if pgoff, err = parseHex(off); err != nil {
		return 0, 0, 0, false
	}
	return start, size, pgoff, true
}

func parseHex(b []byte) (uint64, error) {
	v, ok := hexBytes(bytes.TrimPrefix(bytes.TrimSpace(b), []byte("0x")))
	if !ok {
		return 0, strconv.ErrSyntax
	}
	return v, nil
}
