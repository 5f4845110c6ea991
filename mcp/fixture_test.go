package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/testgit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newWorkspace makes a git repository from harness/testdata/workspace (one
// shell target, "spin", on branch main) and returns its top level.
func newWorkspace(t *testing.T) string {
	t.Helper()
	testgit.Setenv(t)
	return testgit.NewRepoFS(t, os.DirFS("../harness/testdata/workspace"))
}

func readDiff(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../harness/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// connect serves dir in-process and returns a client session on it. The
// middleware, if any, sees every request the server receives.
func connect(t *testing.T, dir string, opts *sdk.ClientOptions, mw ...sdk.Middleware) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	srv := New(dir, "test")
	srv.AddReceivingMiddleware(mw...)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls a tool and returns its result, failing on protocol errors.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
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
