package jail

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Output is one captured stream: the first Cap bytes, the last tailSize bytes,
// and the length and SHA-256 of everything, so streams too large to keep can
// still be compared exactly.
type Output struct {
	head  []byte
	cap   int
	tail  []byte // ring buffer of the last tailSize bytes
	pos   int
	total int64
	h     hash.Hash
}

const tailSize = 8 << 10

func newOutput(cap int) Output { return Output{cap: cap, h: sha256.New()} }

// OutputOf is the Output of a stream that printed b, for code that gets
// results from elsewhere than Run (a test feeding a verdict's flow).
func OutputOf(b []byte) Output {
	o := newOutput(len(b))
	o.Write(b)
	return o
}

// Write implements io.Writer; it never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.h.Write(p)
	o.total += int64(len(p))
	if room := o.cap - len(o.head); room > 0 {
		o.head = append(o.head, p[:min(room, len(p))]...)
	}
	for _, b := range p[max(0, len(p)-tailSize):] {
		if len(o.tail) < tailSize {
			o.tail = append(o.tail, b)
			continue
		}
		o.tail[o.pos] = b
		o.pos = (o.pos + 1) % tailSize
	}
	return len(p), nil
}

// Bytes is the kept prefix: all of the stream unless Truncated.
func (o *Output) Bytes() []byte { return o.head }

// Truncated reports that the stream was longer than its cap.
func (o *Output) Truncated() bool { return o.total > int64(len(o.head)) }

// Len is the length of the whole stream.
func (o *Output) Len() int64 { return o.total }

// SHA256 is the hex digest of the whole stream.
func (o *Output) SHA256() string { return hex.EncodeToString(o.h.Sum(nil)) }

// Tail returns up to the last n bytes (n at most 8 KiB).
func (o *Output) Tail(n int) []byte {
	ordered := append(append([]byte{}, o.tail[o.pos:]...), o.tail[:o.pos]...)
	if len(ordered) > n {
		ordered = ordered[len(ordered)-n:]
	}
	return ordered
}
