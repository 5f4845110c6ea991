// Command fakeexec is a test harness speaking hone's exec protocol
// (harness/PROTOCOL.md). FAKE_MODE picks its behaviour:
//
//	echo         answer each message with its text; done when it says "bye"
//	late         answer each message; with the next message, first answer the
//	             previous one a second time, late, naming its turn
//	late-v1      answer each message, then answer it again at once and report
//	             a fatal error, without turn numbers (a version-1 program)
//	fatal        report a fatal error (not logged in) instead of answering
//	never-ready  print nothing, forever (startup timeout)
//	bad-ready    print a first line that is not ready
//	hang         start a turn and never finish it (turn timeout)
//	crash        start a turn, complain on stderr, exit 3 (crash mid-turn)
//	stubborn     say ready, then ignore SIGTERM and end of input (Stop must SIGKILL)
//	script       run FAKE_SCRIPT: per turn, a list of MCP tool calls made
//	             through HONE_MCP_COMMAND; "$patch_id" in an argument is the
//	             id the last propose_patch returned
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type event map[string]any

var out = json.NewEncoder(os.Stdout)

func emit(ev event) { out.Encode(ev) }

func main() {
	mode := os.Getenv("FAKE_MODE")
	switch mode {
	case "never-ready":
		time.Sleep(time.Hour)
		return
	case "bad-ready":
		fmt.Println("hello, I am not a protocol line")
		time.Sleep(time.Hour)
		return
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv("HONE_PROTOCOL") != "1" {
		fmt.Fprintln(os.Stderr, "fakeexec: HONE_PROTOCOL is not 1")
		os.Exit(2)
	}
	emit(event{"type": "ready"})
	if mode == "stubborn" {
		time.Sleep(time.Hour)
	}
	var script [][]call
	if mode == "script" {
		b, err := os.ReadFile(os.Getenv("FAKE_SCRIPT"))
		if err == nil {
			err = json.Unmarshal(b, &script)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeexec: bad FAKE_SCRIPT:", err)
			os.Exit(2)
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<24)
	s := &session{}
	last := "" // the previous message's text
	for n := 0; in.Scan(); n++ {
		var msg struct {
			Type, Text string
			Turn       int
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil || msg.Type != "message" {
			fmt.Fprintf(os.Stderr, "fakeexec: bad input line %q\n", in.Text())
			os.Exit(2)
		}
		prev := last
		last = msg.Text
		switch mode {
		case "echo":
			emit(event{"type": "llm_request", "model": "fake-1"})
			emit(event{"type": "text_output", "text": "echo: " + msg.Text})
			emit(event{"type": "turn_complete", "response": msg.Text, "done": strings.Contains(msg.Text, "bye"), "turn": msg.Turn})
		case "late":
			// The previous turn's leftovers come only once this message was
			// read, so only the turn number tells them apart.
			if prev != "" {
				emit(event{"type": "text_output", "text": "an afterthought", "turn": msg.Turn - 1})
				emit(event{"type": "turn_complete", "response": "late answer " + prev, "turn": msg.Turn - 1})
			}
			emit(event{"type": "turn_complete", "response": "answer " + msg.Text, "turn": msg.Turn})
		case "late-v1":
			emit(event{"type": "turn_complete", "response": "answer " + msg.Text})
			emit(event{"type": "text_output", "text": "an afterthought"})
			emit(event{"type": "turn_complete", "response": "late answer " + msg.Text})
			emit(event{"type": "error", "message": "a late fatal error", "fatal": true})
		case "fatal":
			emit(event{"type": "llm_request", "model": "fake-1"})
			emit(event{"type": "error", "message": "Not logged in", "fatal": true})
		case "hang":
			emit(event{"type": "text_output", "text": "thinking"})
			time.Sleep(time.Hour)
		case "crash":
			emit(event{"type": "tool_call", "tool": "read_profile", "tool_call_id": "1", "arguments": map[string]any{"target": "x"}})
			fmt.Fprintln(os.Stderr, "fakeexec: fatal: out of ideas")
			os.Exit(3)
		case "script":
			if n >= len(script) {
				emit(event{"type": "turn_complete", "response": "nothing left", "done": true})
				continue
			}
			s.turn(script[n])
			emit(event{"type": "turn_complete", "response": fmt.Sprintf("turn %d done", n+1), "done": n == len(script)-1})
		}
	}
	s.close()
}

// call is one scripted tool call.
type call struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

type session struct {
	cs      *mcp.ClientSession
	patchID string
	calls   int
}

func (s *session) connect(ctx context.Context) error {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("HONE_MCP_COMMAND")), &argv); err != nil || len(argv) == 0 {
		return fmt.Errorf("HONE_MCP_COMMAND is not a JSON argv: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "fakeexec", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil)
	s.cs = cs
	return err
}

func (s *session) turn(calls []call) {
	ctx := context.Background()
	if s.cs == nil {
		if err := s.connect(ctx); err != nil {
			emit(event{"type": "error", "message": err.Error()})
			return
		}
	}
	for _, c := range calls {
		s.calls++
		id := fmt.Sprint(s.calls)
		args := map[string]any{}
		for k, v := range c.Args {
			if v == "$patch_id" {
				v = s.patchID
			}
			args[k] = v
		}
		raw, _ := json.Marshal(args)
		emit(event{"type": "tool_call", "tool": c.Tool, "tool_call_id": id, "arguments": json.RawMessage(raw)})
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: args})
		if err != nil {
			emit(event{"type": "error", "message": err.Error()})
			continue
		}
		text := ""
		for _, content := range res.Content {
			if t, ok := content.(*mcp.TextContent); ok {
				text += t.Text
			}
		}
		if c.Tool == "propose_patch" && !res.IsError {
			var p struct {
				PatchID string `json:"patch_id"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &p)
			s.patchID = p.PatchID
		}
		emit(event{"type": "tool_result", "tool": c.Tool, "tool_call_id": id, "result": text, "is_error": res.IsError})
	}
}

func (s *session) close() {
	if s.cs != nil {
		s.cs.Close()
	}
}
