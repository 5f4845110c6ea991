package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// StderrLines is how many trailing stderr lines a Process keeps.
const StderrLines = 50

// Process is a harness program in its own process group, with line-oriented
// stdout and the tail of its stderr. Its stdout is read by one goroutine into
// Lines, so a turn can wait on output, exit and timeout at once.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte
	done  chan struct{} // closed once the process has exited and been reaped
	quit  chan struct{} // closed by Stop, so an unread stdout cannot block the reader

	mu      sync.Mutex
	stderr  []string
	waitErr error
	stopped bool
}

// StartProcess runs argv in dir with env added to hone's environment.
// mirror, when non-nil, also receives the raw stderr.
func StartProcess(argv []string, dir string, env []string, mirror io.Writer) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	// Its own group, so Stop reaches every child the harness spawned (its MCP
	// servers, shells) and a Ctrl-C at hone's terminal is hone's to handle.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipes rather than cmd.StdoutPipe: Wait must not wait for a
	// grandchild that inherited stdout, or a crash would go unnoticed.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{outR, outW, errR, errW} {
			f.Close()
		}
		return nil, err
	}
	outW.Close()
	errW.Close()
	p := &Process{cmd: cmd, stdin: stdin, lines: make(chan []byte, 64), done: make(chan struct{}), quit: make(chan struct{})}
	stderrRead := make(chan struct{})
	go p.readStdout(outR)
	go func() {
		p.readStderr(errR, mirror)
		close(stderrRead)
	}()
	go func() {
		err := cmd.Wait()
		// Let the stderr reader catch up, so an error built on exit shows the
		// last lines; a child still holding stderr open does not delay us long.
		select {
		case <-stderrRead:
		case <-time.After(drainAfterExit):
		}
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *Process) readStdout(r *os.File) {
	defer r.Close()
	defer close(p.lines)
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			select {
			case p.lines <- line:
			case <-p.quit:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Process) readStderr(r *os.File, mirror io.Writer) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if mirror != nil {
			io.WriteString(mirror, line+"\n")
		}
		p.mu.Lock()
		p.stderr = append(p.stderr, line)
		if len(p.stderr) > StderrLines {
			p.stderr = p.stderr[len(p.stderr)-StderrLines:]
		}
		p.mu.Unlock()
	}
}

// Lines yields stdout one line at a time (without the newline, blank lines
// dropped); it is closed at end of output.
func (p *Process) Lines() <-chan []byte { return p.lines }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Write sends b to the process's stdin.
func (p *Process) Write(b []byte) error {
	_, err := p.stdin.Write(b)
	return err
}

// Alive reports whether the process has not exited.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// ExitErr is the process's exit status once Done is closed (nil for status 0).
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
}

// Stderr returns the last StderrLines lines the process wrote to stderr.
func (p *Process) Stderr() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stderr...)
}

// Stop closes stdin (a polite end of input), then signals the whole process
// group with SIGTERM and, after grace, SIGKILL; it returns once the leader is
// reaped or ctx ends. Calling it again is a no-op.
func (p *Process) Stop(ctx context.Context, grace time.Duration) error {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil
	}
	p.stopped = true
	p.mu.Unlock()
	close(p.quit)
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	// The group is signalled even when the leader has already exited: children
	// it left behind still hold the group id.
	syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
