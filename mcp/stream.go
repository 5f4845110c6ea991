package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StreamTransport serves MCP over newline-delimited JSON on in and out (hone's
// stdin and stdout). Unlike the SDK's stdio transport it answers every request
// it has read before it reports the end of input, so a script can pipe a file
// of requests in (`hone mcp < requests.jsonl`) and get every answer out.
// out is never closed.
func StreamTransport(in io.Reader, out io.Writer) sdk.Transport {
	c := &counter{}
	c.answered = sync.NewCond(&c.mu)
	return &sdk.IOTransport{
		Reader: &requestReader{r: in, c: c},
		Writer: &answerWriter{w: out, c: c},
	}
}

// counter tracks requests read (messages with an id and a method) against
// responses written (messages with an id and no method).
type counter struct {
	mu                  sync.Mutex
	answered            *sync.Cond
	requests, responses int
	closed              bool
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
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && m.Method != "" {
			rr.c.mu.Lock()
			rr.c.requests++
			rr.c.mu.Unlock()
		}
	})
	if err == io.EOF && n == 0 {
		rr.c.mu.Lock()
		for rr.c.responses < rr.c.requests && !rr.c.closed {
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

type answerWriter struct {
	w   io.Writer
	c   *counter
	buf bytes.Buffer
}

func (aw *answerWriter) Write(p []byte) (int, error) {
	n, err := aw.w.Write(p)
	lines(&aw.buf, p[:n], func(line []byte) {
		var m message
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && m.Method == "" {
			aw.c.mu.Lock()
			aw.c.responses++
			aw.c.answered.Broadcast()
			aw.c.mu.Unlock()
		}
	})
	return n, err
}

// Close leaves out open: it is hone's stdout.
func (aw *answerWriter) Close() error {
	aw.c.mu.Lock()
	aw.c.closed = true
	aw.c.answered.Broadcast()
	aw.c.mu.Unlock()
	return nil
}
