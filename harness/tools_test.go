package harness

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
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
