package harness

import (
	"encoding/json"
	"time"
)

// EventType names what happened in a turn. The values are the wire names in
// PROTOCOL.md and in `hone agent run --json`.
type EventType string

const (
	LLMRequest   EventType = "llm_request"   // the harness asked its model: Model
	LLMResponse  EventType = "llm_response"  // the model answered: Model, Text, StopReason, token counts
	LLMChunk     EventType = "llm_chunk"     // a streamed piece of the answer: Text
	ToolCall     EventType = "tool_call"     // the model called a tool: Tool, ToolCallID, Arguments
	ToolResult   EventType = "tool_result"   // the tool answered: ToolCallID, Tool, Result, IsError
	TextOutput   EventType = "text_output"   // text addressed to the user: Text
	ErrorEvent   EventType = "error"         // the harness reported a problem: Message
	TurnComplete EventType = "turn_complete" // the turn ended: Response, Done
)

// Event is one step of a turn. Only the fields listed for its Type are set.
type Event struct {
	Type EventType `json:"type"`
	Time time.Time `json:"time,omitzero"`

	Model        string          `json:"model,omitempty"`
	Text         string          `json:"text,omitempty"`
	StopReason   string          `json:"stop_reason,omitempty"`
	InputTokens  int             `json:"input_tokens,omitempty"`
	OutputTokens int             `json:"output_tokens,omitempty"`
	Tool         string          `json:"tool,omitempty"`
	ToolCallID   string          `json:"tool_call_id,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Result       string          `json:"result,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Message      string          `json:"message,omitempty"`
	Response     string          `json:"response,omitempty"`
	Done         bool            `json:"done,omitempty"`
}

// Known reports whether t is one of the eight event types.
func (t EventType) Known() bool {
	switch t {
	case LLMRequest, LLMResponse, LLMChunk, ToolCall, ToolResult, TextOutput, ErrorEvent, TurnComplete:
		return true
	}
	return false
}
