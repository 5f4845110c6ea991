package main

import (
	"context"
	"errors"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/mcp"
)

func init() { register("mcp", command(newMCPCmd)) }

type mcpOptions struct {
	*factory

	Workspace string // "" is the factory's directory
}

func newMCPCmd(f *factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{factory: f}
	cmd := &cobra.Command{
		Use:   "mcp [--workspace DIR]",
		Short: "Serve hone's six agent tools over MCP on stdin/stdout",
		Long: `Serve the Model Context Protocol on stdin and stdout, exposing exactly six tools:
read_profile, read_ledger, read_playbook, read_target_source, propose_patch and
run_verdict. Each calls the same code as the matching hone command. A refusal
(allowlist, duplicate attempt) is a tool result marked isError whose text is
the message the command would print. Only propose_patch and run_verdict write.
run_verdict reports progress while it runs; a client that cancels it stops
waiting, but the verdict runs to its end and is recorded, and the cancelled
request gets no answer.

An MCP client starts it as a stdio server, for example in Claude Code:

  claude mcp add hone -- hone mcp --workspace /path/to/repo

The server runs until its input ends, and answers every request it read
(and finishes every verdict it started) before it exits, so
` + "`hone mcp < requests.jsonl`" + ` works from a script.`,
		Example: `  claude mcp add hone -- hone mcp --workspace /path/to/repo
  hone mcp < requests.jsonl`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, mcpRun),
	}
	cmd.Flags().StringVar(&opts.Workspace, "workspace", "", "serve the workspace around `DIR` (absolute, or relative to the current directory; default: the current directory)")
	return cmd
}

func mcpRun(ctx context.Context, opts *mcpOptions) error {
	dir := opts.Workspace
	if dir == "" {
		dir = opts.dir
	}
	err := mcp.Serve(ctx, dir, honeVersion(), mcp.StreamTransport(opts.io.In, opts.io.Out))
	if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		// Input ended or hone was asked to stop: the normal end of a session.
		return nil
	}
	return err
}
