package harness

import (
	"encoding/json"
	"errors"
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
	IsReplay       bool     `json:"isReplay"`         // user: the echo of a message hone sent
	Error          string   `json:"error"`            // assistant: why the harness made up this answer, e.g. "authentication_failed"
	IsError        bool     `json:"is_error"`         // result
	Result         string   `json:"result"`           // result
	Errors         []string `json:"errors"`           // result, on some error subtypes
	APIErrorStatus any      `json:"api_error_status"` // result: the model API's HTTP status, when it failed
}

// parse maps one stream-json line to harness events. Claude Code echoes each
// message hone sends (--replay-user-messages); until this turn's echo, what
// it writes belongs to an earlier turn and cannot answer this one. A Claude
// Code that echoed nothing in the first turn does not echo at all, and its
// turns are told apart only as the exec protocol's are without turn numbers.
func (a *claudeCode) parse(raw []byte) ([]Event, error) {
	var l claudeLine
	if err := json.Unmarshal(raw, &l); err != nil {
		return []Event{{Type: ErrorEvent, Message: fmt.Sprintf("not a stream-json line: %.200s", raw)}}, nil
	}
	if l.Type == "system" {
		if l.Subtype == "init" {
			a.inited.Store(true)
		}
		return nil, nil
	}
	if l.Type == "user" && l.IsReplay {
		a.replays++
		a.apiError, a.refused = "", false
		return nil, nil
	}
	if a.replays > 0 && a.replays < a.sent {
		switch l.Type {
		case "stream_event", "assistant", "user", "result":
			return []Event{earlierOutput(raw)}, nil
		}
		return nil, nil
	}
	switch l.Type {
	case "stream_event":
		return a.parsePartial(l), nil
	case "assistant":
		if l.Error != "" {
			a.apiError = l.Error
		}
		if l.Message != nil && l.Message.StopReason == "refusal" {
			a.refused = true
		}
		return a.parseAssistant(l.Message), nil
	case "user":
		return a.parseToolResults(l.Message), nil
	case "result":
		if msg, failed := a.failure(l); failed {
			return nil, errors.New(msg)
		}
		return []Event{{Type: TurnComplete, Response: l.Result, Done: hasDoneMarker(l.Result)}}, nil
	}
	return nil, nil
}

// failure says whether a result ends the run rather than the turn, and why,
// in Claude Code's words: any result marked is_error (not logged in, quota,
// rate limit, max turns) or not a success, and any turn the model refused.
func (a *claudeCode) failure(l claudeLine) (string, bool) {
	if !l.IsError && (l.Subtype == "" || l.Subtype == "success") && !a.refused {
		return "", false
	}
	var msg string
	switch {
	case len(l.Errors) > 0:
		msg = strings.Join(l.Errors, "; ")
	case l.Result != "":
		msg = l.Result
	default:
		msg = l.Subtype
	}
	if a.refused {
		msg = "the model refused: " + msg
	}
	var why []string
	if l.Subtype != "" && l.Subtype != "success" && msg != l.Subtype {
		why = append(why, l.Subtype)
	}
	if a.apiError != "" {
		why = append(why, a.apiError)
	}
	if l.APIErrorStatus != nil {
		why = append(why, fmt.Sprintf("API status %v", l.APIErrorStatus))
	}
	if len(why) > 0 {
		msg += " (" + strings.Join(why, ", ") + ")"
	}
	return msg, true
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
