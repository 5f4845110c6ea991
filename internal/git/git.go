// Package git is the one place hone runs the git binary. Callers get stdout as
// bytes and, on failure, an *Error holding git's own stderr, so messages can show
// what git said instead of a bare exit status.
package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Error is a failed git invocation.
type Error struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 && i < len(msg)-1 {
		// Keep the first line plus git's last line, which usually names the cause.
		msg = msg[:i] + " ... " + msg[strings.LastIndexByte(msg, '\n')+1:]
	}
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Cmd describes one git invocation.
type Cmd struct {
	Dir   string    // working directory; "" means the current one
	Args  []string  // arguments after "git"
	Env   []string  // extra KEY=VALUE pairs, appended to the inherited environment
	Stdin io.Reader // nil means no input
	// Isolated ignores the user's and the system's git configuration, and
	// neutralises the repository's own (see isolation), so that nothing
	// configured anywhere can run a program during hone's call or change
	// what it writes.
	Isolated bool
}

// Run executes c and returns its stdout.
func Run(ctx context.Context, c Cmd) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if c.Isolated {
		iso, err := isolation(ctx, c.Dir)
		if err != nil {
			return nil, err
		}
		cmd.Env = append(append(cmd.Env, isolatedEnv...), iso...)
	}
	cmd.Env = append(cmd.Env, c.Env...)
	cmd.Stdin = c.Stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		ge := &Error{Args: c.Args, Stderr: stderr.String(), Err: err, ExitCode: -1}
		if ee, ok := err.(*exec.ExitError); ok {
			ge.ExitCode = ee.ExitCode()
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// Output runs git in dir and returns stdout with the trailing newline removed.
func Output(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := Run(ctx, Cmd{Dir: dir, Args: args})
	return strings.TrimRight(string(out), "\n"), err
}

// ExitCode returns git's exit status for err, or -1 when err is not a git exit.
func ExitCode(err error) int {
	if ge, ok := err.(*Error); ok {
		return ge.ExitCode
	}
	return -1
}

// CanonicalDiffArgs are the arguments of the diff whose SHA-256 a proposal
// records as diff_sha256: full blob ids, binary patches, no rename detection,
// and the settings that plumbing diffs still read pinned, so every clone
// computes the same bytes. Run them with Cmd.Isolated.
func CanonicalDiffArgs(from, to string) []string {
	return []string{"-c", "core.quotePath=true", "-c", "diff.suppressBlankEmpty=false", "diff-tree", "-p", "--full-index", "--binary", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", from, to}
}

// CanonicalDiffSHA256 returns the hex SHA-256 of the canonical diff from one
// commit to another (see CanonicalDiffArgs).
func CanonicalDiffSHA256(ctx context.Context, dir, from, to string) (string, error) {
	out, err := Run(ctx, Cmd{Dir: dir, Args: CanonicalDiffArgs(from, to), Isolated: true})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(out)
	return hex.EncodeToString(sum[:]), nil
}

// Short abbreviates a commit or object id to the 12 hex digits hone shows in
// messages; a shorter string (a truncated or hand-edited value) is returned
// whole rather than sliced past its end.
func Short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
