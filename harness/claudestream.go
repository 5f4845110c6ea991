package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The subset of Claude Code's stream-json format hone reads and writes.

type claudeInput struct {
	Type    string        `json:"type"`
	Message claudeMessage `json:"message"`
}

type claudeMessage struct {
	ID         string        `json:"id,omitempty"`
	Role       string        `json:"role"`
	Model      string        `json:"model,omitempty"`
	Content    []claudeBlock `json:"content"`
	StopReason string        `json:"stop_reason,omitempty"`
	Usage      *claudeUsage  `json:"usage,omitempty"`
}

type claudeUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`          // tool_use
	Name      string          `json:"name,omitempty"`        // tool_use
	Input     json.RawMessage `json:"input,omitempty"`       // tool_use
	ToolUseID string          `json:"tool_use_id,omitempty"` // tool_result
	Content   json.RawMessage `json:"content,omitempty"`     // tool_result: a string or text blocks
	IsError   bool            `json:"is_error,omitempty"`    // tool_result
}

// claudeLine is any line Claude Code writes; which fields are set depends on Type.
type claudeLine struct {
	Type    string         `json:"type"`
	Subtype string         `json:"subtype"`
	Model   string         `json:"model"`   // system/init
	Message *claudeMessage `json:"message"` // assistant, user
	Event   *struct {      // stream_event (partial messages)
		Type    string         `json:"type"`
		Message *claudeMessage `json:"message"`
		Delta   *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	} `json:"event"`
	IsError bool     `json:"is_error"` // result
	Result  string   `json:"result"`   // result
	Errors  []string `json:"errors"`   // result, on some error subtypes
}

// parse maps one stream-json line to harness events.
func (a *claudeCode) parse(raw []byte) ([]Event, error) {
	var l claudeLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return []Event{{Type: ErrorEvent, Message: fmt.Sprintf("not a stream-json line: %.200s", raw)}}, nil
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			a.inited.Store(true)
		}
		return nil, nil
	case "stream_event":
		return a.parsePartial(l), nil
	case "assistant":
		return a.parseAssistant(l.Message), nil
	case "user":
		return a.parseToolResults(l.Message), nil
	case "result":
		var out []Event
		if l.IsError || (l.Subtype != "" && l.Subtype != "success") {
			msg := l.Subtype
			if len(l.Errors) > 0 {
				msg += ": " + strings.Join(l.Errors, "; ")
			} else if l.Result != "" {
				msg += ": " + l.Result
			}
			out = append(out, Event{Type: ErrorEvent, Message: msg})
		}
		return append(out, Event{Type: TurnComplete, Response: l.Result, Done: hasDoneMarker(l.Result)}), nil
	}
	return nil, nil
}

func (a *claudeCode) parsePartial(l claudeLine) []Event {
	ev := l.Event
	if ev == nil {
		return nil
	}
	switch {
	case ev.Type == "message_start":
		model := ""
		if ev.Message != nil {
			model = ev.Message.Model
		}
		return []Event{{Type: LLMRequest, Model: model}}
	case ev.Type == "content_block_delta" && ev.Delta != nil && ev.Delta.Type == "text_delta":
		return []Event{{Type: LLMChunk, Text: ev.Delta.Text}}
	}
	return nil
}

func (a *claudeCode) parseAssistant(m *claudeMessage) []Event {
	if m == nil {
		return nil
	}
	resp := Event{Type: LLMResponse, Model: m.Model, StopReason: m.StopReason}
	if m.Usage != nil {
		resp.InputTokens, resp.OutputTokens = m.Usage.InputTokens, m.Usage.OutputTokens
	}
	var rest []Event
	var text []string
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
			rest = append(rest, Event{Type: TextOutput, Text: b.Text})
		case "tool_use":
			a.toolNames[b.ID] = b.Name
			rest = append(rest, Event{Type: ToolCall, Tool: b.Name, ToolCallID: b.ID, Arguments: b.Input})
		}
	}
	resp.Text = strings.Join(text, "\n")
	return append([]Event{resp}, rest...)
}

func (a *claudeCode) parseToolResults(m *claudeMessage) []Event {
	if m == nil {
		return nil
	}
	var out []Event
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			out = append(out, Event{Type: ToolResult, ToolCallID: b.ToolUseID, Tool: a.toolNames[b.ToolUseID], Result: blockText(b.Content), IsError: b.IsError})
		}
	}
	return out
}

// blockText flattens a tool_result's content, which is either a string or a
// list of content blocks.
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func hasDoneMarker(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == DoneMarker {
			return true
		}
	}
	return false
}
