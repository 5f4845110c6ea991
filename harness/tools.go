package harness

import "github.com/hone-perf/hone/internal/errs"

// EnvPrefix renames an injected tool whose name a harness built-in already uses.
const EnvPrefix = "env_"

// ResolveTools applies the tool-name conflict rule: a tool whose name collides
// with a built-in (or with a tool already placed) is offered as env_<name>;
// if that name collides too, injection fails rather than shadow anything.
// ServerName keeps the name the MCP server knows the tool by.
func ResolveTools(tools []Tool, builtins []string) ([]Tool, error) {
	taken := map[string]bool{}
	for _, b := range builtins {
		taken[b] = true
	}
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		if t.ServerName == "" {
			t.ServerName = t.Name
		}
		name := t.ServerName
		if taken[name] {
			name = EnvPrefix + name
			if taken[name] {
				return nil, errs.Invalidf("tool %q collides with a harness built-in and so does its fallback name %q; rename the tool", t.ServerName, name)
			}
		}
		taken[name] = true
		t.Name = name
		out = append(out, t)
	}
	return out, nil
}
