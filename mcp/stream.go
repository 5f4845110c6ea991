package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StreamTransport serves MCP over newline-delimited JSON on in and out (hone's
// stdin and stdout). Unlike the SDK's stdio transport it answers every request
// it has read before it reports the end of input, so a script can pipe a file
// of requests in (`hone mcp < requests.jsonl`) and get every answer out. And
// it never answers a request the client has cancelled: MCP forbids it, and the
// SDK writes the handler's answer whatever happened. out is never closed.
func StreamTransport(in io.Reader, out io.Writer) sdk.Transport {
	c := &counter{pending: map[string]bool{}, cancelled: map[string]bool{}}
	c.answered = sync.NewCond(&c.mu)
	return &sdk.IOTransport{
		Reader: &requestReader{r: in, c: c},
		Writer: &answerWriter{w: out, c: c},
	}
}

// counter tracks the requests read (messages with an id and a method) that
// still await a response (a message with an id and no method), and which of
// them the client cancelled.
type counter struct {
	mu        sync.Mutex
	answered  *sync.Cond
	pending   map[string]bool // ids read, not yet answered
	cancelled map[string]bool // pending ids the client cancelled
	closed    bool
}

// lines feeds complete lines of p (after what buf held) to f and keeps the rest.
func lines(buf *bytes.Buffer, p []byte, f func(line []byte)) {
	buf.Write(p)
	for {
		i := bytes.IndexByte(buf.Bytes(), '\n')
		if i < 0 {
			return
		}
		f(buf.Next(i + 1))
	}
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"` // notifications/cancelled
	} `json:"params"`
}

// key names an id however it was spelled, so a request, its cancellation and
// the SDK's answer (which rewrites 1.0 as 1) agree on it.
func key(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

type requestReader struct {
	r   io.Reader
	c   *counter
	buf bytes.Buffer
}

func (rr *requestReader) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	lines(&rr.buf, p[:n], func(line []byte) {
		var m message
		if json.Unmarshal(line, &m) != nil {
			return
		}
		rr.c.mu.Lock()
		defer rr.c.mu.Unlock()
		switch {
		case len(m.ID) > 0 && m.Method != "":
			rr.c.pending[key(m.ID)] = true
		case m.Method == "notifications/cancelled" && rr.c.pending[key(m.Params.RequestID)]:
			rr.c.cancelled[key(m.Params.RequestID)] = true
		}
	})
	if err == io.EOF && n == 0 {
		rr.c.mu.Lock()
		for len(rr.c.pending) > 0 && !rr.c.closed {
			rr.c.answered.Wait()
		}
		rr.c.mu.Unlock()
	}
	return n, err
}

func (rr *requestReader) Close() error {
	rr.c.mu.Lock()
	rr.c.closed = true
	rr.c.answered.Broadcast()
	rr.c.mu.Unlock()
	return nil
}

// answerWriter passes on whole lines only, so it can leave out the answer to
// a cancelled request. The SDK writes every message as one line.
type answerWriter struct {
	w   io.Writer
	c   *counter
	buf bytes.Buffer
}

func (aw *answerWriter) Write(p []byte) (int, error) {
	var err error
	lines(&aw.buf, p, func(line []byte) {
		var m message
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && m.Method == "" {
			id := key(m.ID)
			aw.c.mu.Lock()
			drop := aw.c.cancelled[id]
			delete(aw.c.pending, id)
			delete(aw.c.cancelled, id)
			aw.c.answered.Broadcast()
			aw.c.mu.Unlock()
			if drop {
				return
			}
		}
		if err == nil {
			_, err = aw.w.Write(line)
		}
	})
	if err != nil {
		// No answer can reach the client any more: stop waiting for them.
		aw.Close()
		return 0, err
	}
	return len(p), nil
}

// Close leaves out open: it is hone's stdout.
func (aw *answerWriter) Close() error {
	aw.c.mu.Lock()
	aw.c.closed = true
	aw.c.answered.Broadcast()
	aw.c.mu.Unlock()
	return nil
}
