// Package mcp serves hone's six agent tools over the Model Context Protocol:
// read_profile, read_ledger, read_playbook, read_target_source, propose_patch
// and run_verdict. Each tool calls the same package function as the matching
// CLI command, so their answers and refusals agree: read_ledger returns the
// ledger's one attempts view (ledger.Attempts), which `hone ledger` and
// `hone patch list` also project. Only propose_patch and run_verdict write,
// and only through those functions.
package mcp

import (
	"context"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/workspace"
)

// ServerName is the name the server announces, and the one harnesses prefix
// its tools with (Claude Code calls them mcp__hone__<tool>).
const ServerName = "hone"

// ToolNames are the six tools (tools/list returns them sorted by name).
var ToolNames = []string{"read_profile", "read_ledger", "read_playbook", "read_target_source", "propose_patch", "run_verdict"}

// handlers answer tool calls for the workspace around dir.
type handlers struct {
	// dir is any directory inside the workspace. The workspace is reopened on
	// every call, so edits to hone.toml during a long session take effect.
	dir string
	// life ends when the server is asked to stop. A verdict outlives the
	// cancellation of its request, but not the server.
	life context.Context
}

// New builds the MCP server with its six tools.
func New(dir, version string) *sdk.Server { return newServer(context.Background(), dir, version) }

func newServer(life context.Context, dir, version string) *sdk.Server {
	h := &handlers{dir: dir, life: life}
	s := sdk.NewServer(&sdk.Implementation{Name: ServerName, Title: "hone", Version: version}, &sdk.ServerOptions{
		Instructions: instructions,
		// Tools never change during a session; logging is not offered.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	h.addTools(s)
	return s
}

// Serve runs the server on t until the client disconnects or ctx ends. It
// first checks that dir is inside a workspace, so a misconfigured server fails
// at startup rather than on every call.
func Serve(ctx context.Context, dir, version string, t sdk.Transport) error {
	if _, err := workspace.Open(dir); err != nil {
		return err
	}
	return newServer(ctx, dir, version).Run(ctx, t)
}

const instructions = `hone is the trust layer for performance optimization. Read the target's latest
profile, the ledger of earlier attempts, a playbook and the target's source at
its pin; then state a hypothesis and propose one patch (a git-style unified diff
against the pin, inside the target's allowlist), and ask for its verdict. The
verdict (gates, then an interleaved benchmark with confidence intervals) is the
only measure of success. Never repeat an attempt the ledger already judged.`

func (h *handlers) workspace() (*workspace.Workspace, error) { return workspace.Open(h.dir) }

// refusal turns a package error into the tool result the client sees: an
// error result whose text is the one line the CLI would print after "hone: ".
func refusal(err error) error {
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
	return &errs.Error{Code: errs.CodeOf(err), Msg: msg, Err: err}
}

// readOnly marks the tools that cannot change anything.
func readOnly() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{ReadOnlyHint: true}
}

// Tools lists the six tools with their input and output schemas, exactly as
// a client sees them in tools/list, for harnesses that need the definitions
// before they start the server.
func Tools(ctx context.Context) ([]*sdk.Tool, error) {
	ct, st := sdk.NewInMemoryTransports()
	ss, err := New("", "").Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "hone", Version: "internal"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	return res.Tools, nil
}
