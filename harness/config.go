package harness

import (
	"io"
	"time"
)

// Config describes how to run one harness.
type Config struct {
	Name    string   // adapter name: "claude-code" or "exec"
	Command []string // argv of the harness program; claude-code defaults to "claude"
	// WorkingDir is where the harness runs when Start is given no directory.
	WorkingDir string
	Env        []string // extra KEY=VALUE pairs on top of hone's environment
	// StartupTimeout bounds how long the harness may take to become ready.
	StartupTimeout time.Duration
	// TurnTimeout bounds one turn, from sending the message to turn_complete.
	TurnTimeout time.Duration
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
	StopGrace time.Duration
	Model     string // passed to harnesses that choose a model; "" keeps theirs
	// MCPConfigPath is where the adapter writes the MCP configuration naming
	// the bridge; "" means a file in a fresh temporary directory.
	MCPConfigPath string
	// Builtins overrides the adapter's list of built-in tool names (the exec
	// adapter has none by default, since it cannot know the program's).
	Builtins []string
	// Stderr, when set, receives the harness's stderr as it is written, beside
	// the last-lines buffer kept for error messages.
	Stderr io.Writer
}

// Defaults for zero Config durations.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultTurnTimeout    = 30 * time.Minute
	DefaultStopGrace      = 5 * time.Second
)

func (c Config) withDefaults() Config {
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.TurnTimeout <= 0 {
		c.TurnTimeout = DefaultTurnTimeout
	}
	if c.StopGrace <= 0 {
		c.StopGrace = DefaultStopGrace
	}
	return c
}
