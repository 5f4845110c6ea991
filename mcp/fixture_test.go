package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/testproc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newWorkspace makes a git repository from harness/testdata/workspace (one
// shell target, "spin", on branch main) and returns its top level.
func newWorkspace(t *testing.T) string {
	t.Helper()
	testgit.Setenv(t)
	return testgit.NewRepoFS(t, os.DirFS("../harness/testdata/workspace"))
}

// refs lists every ref of the repository at dir, to show nothing was written.
func refs(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "for-each-ref").CombinedOutput()
	if err != nil {
		t.Fatalf("git for-each-ref: %v\n%s", err, out)
	}
	return string(out)
}

func readDiff(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../harness/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// session is a client connected in-process to hone's server over
// StreamTransport, the transport `hone mcp` serves on, with a record of every
// line the server read and wrote.
type session struct {
	*sdk.ClientSession
	in, out *record
	served  chan struct{} // closed when the server has ended
}

// record is a goroutine-safe copy of one direction of the wire.
type record struct{ testproc.Buffer }

// lines decodes the JSON-RPC messages recorded so far.
func (r *record) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(r.Bytes(), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("the wire holds a line that is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// connect serves dir in-process and returns a client session on it. The
// middleware, if any, sees every request the server receives.
func connect(t *testing.T, dir string, opts *sdk.ClientOptions, mw ...sdk.Middleware) *session {
	t.Helper()
	ctx := context.Background()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	s := &session{in: &record{}, out: &record{}, served: make(chan struct{})}
	srv := newServer(ctx, dir, "test")
	srv.AddReceivingMiddleware(mw...)
	go func() {
		srv.Run(ctx, StreamTransport(io.TeeReader(c2sR, s.in), io.MultiWriter(s.out, s2cW)))
		s2cW.Close()
		close(s.served)
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, &sdk.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.ClientSession = cs
	t.Cleanup(func() {
		cs.Close()
		s.wait(t)
	})
	return s
}

// wait waits for the server to end, which it does once its input has ended
// and every request it read is answered (or, if cancelled, finished).
func (s *session) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.served:
	case <-time.After(5 * time.Minute):
		t.Fatal("the server has not ended 5 minutes after its input did")
	}
}

// call calls a tool and returns its result, failing on protocol errors.
func call(t *testing.T, cs interface {
	CallTool(context.Context, *sdk.CallToolParams) (*sdk.CallToolResult, error)
}, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok fails unless res is a success and returns its structured content as a map.
func ok(t *testing.T, tool string, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, text(res))
	}
	m, isMap := res.StructuredContent.(map[string]any)
	if !isMap {
		t.Fatalf("%s: structured content is %T, want an object", tool, res.StructuredContent)
	}
	return m
}
