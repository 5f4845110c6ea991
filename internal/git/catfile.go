package git

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
)

// CatFile reads objects through one `git cat-file --batch` process. A
// server's pre-receive hook must use git itself: the pushed objects sit in a
// quarantine directory that git names in the environment it gives the hook,
// where no other reader looks. It is not safe for concurrent use.
type CatFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// OpenCatFile starts `git cat-file --batch` in dir, with the inherited
// environment (the hook's quarantine included); Close ends it.
func OpenCatFile(ctx context.Context, dir string) (*CatFile, error) {
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot start git cat-file")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot start git cat-file")
	}
	if err := cmd.Start(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot start git cat-file")
	}
	return &CatFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64*1024)}, nil
}

// Close stops the process.
func (c *CatFile) Close() {
	c.in.Close()
	c.cmd.Wait()
}

// Read returns the content of object id, which must be of type want
// ("blob", "tree", "commit", "tag").
func (c *CatFile) Read(id, want string) ([]byte, error) {
	if _, err := fmt.Fprintf(c.in, "%s\n", id); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "git cat-file stopped")
	}
	head, err := c.out.ReadString('\n')
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "git cat-file stopped")
	}
	f := strings.Fields(head)
	if len(f) == 2 && f[1] == "missing" {
		return nil, errs.Failuref("object %s is missing", id)
	}
	if len(f) != 3 {
		return nil, errs.Failuref("git cat-file printed %q", strings.TrimSpace(head))
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, errs.Failuref("git cat-file printed %q", strings.TrimSpace(head))
	}
	b := make([]byte, size+1) // the content and git's newline after it
	if _, err := io.ReadFull(c.out, b); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "git cat-file stopped")
	}
	if f[1] != want {
		return nil, errs.Invalidf("object %s is a %s, not a %s", id, f[1], want)
	}
	return b[:size], nil
}
