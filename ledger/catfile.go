package ledger

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/hone-perf/hone/internal/errs"
)

// catFile reads objects through one `git cat-file --batch` process. A
// server's pre-receive hook must use git itself: the pushed objects sit in a
// quarantine directory that git names in the environment it gives the hook,
// where no other reader looks.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func openCatFile(ctx context.Context, dir string) (*catFile, error) {
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
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64*1024)}, nil
}

func (c *catFile) close() {
	c.in.Close()
	c.cmd.Wait()
}

// read returns the content of object h, which must be of type want.
func (c *catFile) read(h plumbing.Hash, want string) ([]byte, error) {
	if _, err := fmt.Fprintf(c.in, "%s\n", h); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "git cat-file stopped")
	}
	head, err := c.out.ReadString('\n')
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "git cat-file stopped")
	}
	f := strings.Fields(head)
	if len(f) == 2 && f[1] == "missing" {
		return nil, errs.Failuref("object %s is missing", h)
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
		return nil, errs.Invalidf("object %s is a %s, not a %s", h, f[1], want)
	}
	return b[:size], nil
}

func (c *catFile) readBlob(h plumbing.Hash) ([]byte, error) { return c.read(h, "blob") }

func (c *catFile) commitInfo(h plumbing.Hash) (*commitInfo, error) {
	raw, err := c.read(h, "commit")
	if err != nil {
		return nil, err
	}
	return parseCommit(h, raw)
}

func (c *catFile) tree(h plumbing.Hash) ([]object.TreeEntry, error) {
	raw, err := c.read(h, "tree")
	if err != nil {
		return nil, err
	}
	t := &object.Tree{}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	obj.Write(raw)
	if err := t.Decode(obj); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "tree %s is malformed", h)
	}
	return t.Entries, nil
}
