package harness

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
)

func TestResolveTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tools    []string
		builtins []string
		want     string // resulting names, or the error's start
	}{
		{"no collision", []string{"read_profile", "run_verdict"}, []string{"Bash", "Read"}, "read_profile run_verdict"},
		{"collision renamed", []string{"Read", "run_verdict"}, []string{"Bash", "Read"}, "env_Read run_verdict"},
		{"two injected with one name", []string{"x", "x"}, nil, "x env_x"},
		{"second collision", []string{"Read"}, []string{"Read", "env_Read"}, "error: tool \"Read\" collides"},
		{"third of a name", []string{"x", "x", "x"}, nil, "error: tool \"x\" collides"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tools []Tool
			for _, n := range tc.tools {
				tools = append(tools, Tool{Name: n})
			}
			got, err := ResolveTools(tools, tc.builtins)
			if err != nil {
				if !strings.HasPrefix("error: "+err.Error(), tc.want) {
					t.Fatalf("error %v; want %s", err, tc.want)
				}
				return
			}
			var names []string
			for i, g := range got {
				names = append(names, g.Name)
				if g.ServerName != tc.tools[i] {
					t.Errorf("server name %q; want %q", g.ServerName, tc.tools[i])
				}
			}
			if s := strings.Join(names, " "); s != tc.want {
				t.Errorf("names %q; want %q", s, tc.want)
			}
		})
	}
}

// silent is an adapter whose turns end without turn_complete.
type silent struct{ Adapter }

func (silent) Name() string { return "silent" }
func (silent) SendMessageStreaming(context.Context, string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) { yield(Event{Type: TextOutput, Text: "hm"}, nil) }
}

func TestSendMessageNeedsTurnComplete(t *testing.T) {
	r, err := SendMessage(context.Background(), silent{}, "hello")
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "without turn_complete") {
		t.Fatalf("SendMessage: %v; want ErrProtocol", err)
	}
	if len(r.Events) != 1 {
		t.Errorf("events %+v; want the one text_output", r.Events)
	}
}

// mcpConfigOf injects tools and bridge into an exec adapter, starts it, and
// returns the MCP configuration it wrote, or the injection's error.
func mcpConfigOf(t *testing.T, tools []Tool, bridge Bridge) (mcpConfig, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	a, err := New(Config{Name: "exec", Command: []string{fakeExec}, Env: []string{"FAKE_MODE=echo"}, MCPConfigPath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	if err := a.InjectTools(tools, bridge); err != nil {
		return mcpConfig{}, err
	}
	if err := a.Start(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	var mc mcpConfig
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &mc)
	}
	if err != nil {
		t.Fatal(err)
	}
	return mc, nil
}

func TestMCPConfigNamesOnlyARealBridge(t *testing.T) {
	tools := []Tool{{Name: "read_profile"}}
	t.Run("no bridge, no tools: no server", func(t *testing.T) {
		mc, err := mcpConfigOf(t, nil, Bridge{})
		if err != nil || mc.MCPServers == nil || len(mc.MCPServers) != 0 {
			t.Fatalf("config %+v, %v; want an empty mcpServers", mc, err)
		}
	})
	t.Run("tools without a bridge are refused", func(t *testing.T) {
		_, err := mcpConfigOf(t, tools, Bridge{})
		if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), "without an MCP bridge") {
			t.Fatalf("InjectTools: %v; want invalid, naming the missing bridge", err)
		}
	})
	t.Run("a command and a URL are refused", func(t *testing.T) {
		_, err := mcpConfigOf(t, tools, Bridge{Command: []string{"hone", "mcp"}, URL: "http://127.0.0.1:1/mcp"})
		if !errs.Is(err, errs.Invalid) {
			t.Fatalf("InjectTools: %v; want invalid", err)
		}
	})
	t.Run("a URL bridge without a name", func(t *testing.T) {
		mc, err := mcpConfigOf(t, tools, Bridge{URL: "http://127.0.0.1:1/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := mc.MCPServers[DefaultBridgeName]; len(mc.MCPServers) != 1 || !ok || s.Type != "http" || s.URL != "http://127.0.0.1:1/mcp" {
			t.Fatalf("config %+v; want one http server named %q", mc, DefaultBridgeName)
		}
	})
}
