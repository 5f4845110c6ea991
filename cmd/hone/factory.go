package main

import (
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// factory holds what every command is built from: its streams and the
// directory it runs in. Tests build one over buffers and a temp repository
// (see newTestFactory) and run commands in-process.
type factory struct {
	io  *IOStreams
	dir string // directory hone runs from; "" means the current one
}

// output is a command's printer over the factory's streams; addJSONFlag
// binds its --json.
func (f *factory) output() output { return output{io: f.io} }

// workspace opens the workspace around the factory's directory.
func (f *factory) workspace() (*workspace.Workspace, error) { return workspace.Open(f.dir) }

// ledger opens the workspace and its ledger, the preamble of every command
// that reads or appends entries.
func (f *factory) ledger() (*workspace.Workspace, *ledger.Ledger, error) {
	ws, err := f.workspace()
	if err != nil {
		return nil, nil, err
	}
	return ws, ledger.Open(ws), nil
}

// isTarget reports whether the workspace defines a target of this name.
func (f *factory) isTarget(name string) bool {
	ws, err := f.workspace()
	return err == nil && ws.Config.Targets[name] != nil
}
