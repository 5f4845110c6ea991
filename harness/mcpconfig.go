package harness

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/hone-perf/hone/internal/errs"
)

// mcpConfig is the de-facto standard MCP client configuration file (the one
// Claude Code's --mcp-config reads), naming the single bridge server.
type mcpConfig struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
}

type mcpServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	URL     string   `json:"url,omitempty"`
}

// writeMCPConfig writes the configuration for bridge to path, or to a new
// temporary directory when path is "". It returns the path and a cleanup that
// removes what it created.
func writeMCPConfig(path string, bridge Bridge) (string, func(), error) {
	cleanup := func() {}
	if path == "" {
		dir, err := os.MkdirTemp("", "hone-mcp-")
		if err != nil {
			return "", cleanup, errs.Wrap(errs.Failure, err, "cannot create a directory for the MCP configuration")
		}
		path = filepath.Join(dir, "mcp.json")
		cleanup = func() { os.RemoveAll(dir) }
	}
	// Without a bridge the file names no server, so a harness that reads it
	// starts none rather than one with no name and nowhere to connect.
	servers := map[string]mcpServer{}
	switch {
	case len(bridge.Command) > 0:
		servers[bridge.Name] = mcpServer{Type: "stdio", Command: bridge.Command[0], Args: bridge.Command[1:]}
	case bridge.URL != "":
		servers[bridge.Name] = mcpServer{Type: "http", URL: bridge.URL}
	}
	b, err := json.MarshalIndent(mcpConfig{MCPServers: servers}, "", "  ")
	if err != nil {
		return "", cleanup, err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		cleanup()
		return "", func() {}, errs.Wrap(errs.Failure, err, "cannot write the MCP configuration %s", path)
	}
	return path, cleanup, nil
}
