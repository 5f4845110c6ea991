package harness

import (
	"context"
	"sync"

	"github.com/hone-perf/hone/internal/errs"
)

// DefaultBridgeName names a bridge that was given no name.
const DefaultBridgeName = "hone"

// procAdapter is what both adapters share: one harness process, the tools
// injected before it starts, and the MCP configuration file written for it.
// The adapters embed it and add how they talk to their process.
type procAdapter struct {
	name    string
	cfg     Config
	tools   []Tool
	bridge  Bridge
	mu      sync.Mutex
	proc    *Process
	cleanup func()
}

func newProcAdapter(name string, cfg Config) procAdapter {
	return procAdapter{name: name, cfg: cfg, cleanup: func() {}}
}

func (a *procAdapter) Name() string { return a.name }

// inject resolves tools against builtins (the conflict rule) and keeps them
// for Start. Tools need a bridge to serve them; a bridge is one server,
// reached by a command or by a URL, named "hone" unless it says otherwise.
func (a *procAdapter) inject(builtins []string, tools []Tool, bridge Bridge) error {
	if a.proc != nil {
		return &Error{Kind: ErrStartup, Harness: a.name, Detail: "tools must be injected before Start"}
	}
	switch {
	case len(bridge.Command) > 0 && bridge.URL != "":
		return errs.Invalidf("the MCP bridge has both a command and a URL; give one")
	case len(bridge.Command) == 0 && bridge.URL == "" && len(tools) > 0:
		return errs.Invalidf("%d tools were injected without an MCP bridge to serve them; give the bridge a command or a URL", len(tools))
	case (len(bridge.Command) > 0 || bridge.URL != "") && bridge.Name == "":
		bridge.Name = DefaultBridgeName
	}
	resolved, err := ResolveTools(tools, builtins)
	if err != nil {
		return err
	}
	a.tools, a.bridge = resolved, bridge
	return nil
}

// prepare is the common first half of Start, called with mu held: it refuses
// a second start, picks the working directory, and writes the MCP config.
func (a *procAdapter) prepare(workdir string) (dir, configPath string, err error) {
	if a.proc != nil {
		return "", "", &Error{Kind: ErrStartup, Harness: a.name, Detail: "already started"}
	}
	if workdir == "" {
		workdir = a.cfg.WorkingDir
	}
	path, cleanup, err := writeMCPConfig(a.cfg.MCPConfigPath, a.bridge)
	if err != nil {
		return "", "", &Error{Kind: ErrStartup, Harness: a.name, Err: err}
	}
	a.cleanup = cleanup
	return workdir, path, nil
}

// abandon undoes prepare after a start that failed, whose caller need not
// call Stop: the MCP configuration it wrote goes.
func (a *procAdapter) abandon() {
	a.cleanup()
	a.cleanup = func() {}
}

// running returns the started process, or a not-running error for a turn.
func (a *procAdapter) running() (*Process, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proc == nil {
		return nil, &Error{Kind: ErrNotRunning, Harness: a.name, Detail: "Start was not called"}
	}
	return a.proc, nil
}

func (a *procAdapter) IsAlive() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.proc != nil && a.proc.Alive()
}

// Stop is idempotent: stopping a stopped or never-started adapter succeeds.
func (a *procAdapter) Stop(ctx context.Context) error {
	a.mu.Lock()
	p := a.proc
	a.mu.Unlock()
	defer a.cleanup()
	if p == nil {
		return nil
	}
	return p.Stop(ctx, a.cfg.StopGrace)
}
