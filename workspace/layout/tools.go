package layout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/jail"
)

// tools records, for the commands a layout writes, where the host keeps
// each program they run and what the jail needs to reach it.
type tools struct {
	missing []string // programs not installed here
	pathDir []string // directories to put first on the jail's PATH
	ro      []string // directories the jail must be able to read
	notes   []string // problems finding a toolchain, one sentence each
}

// askTimeout bounds each question init asks a toolchain (`go env`,
// `rustup which`): a broken install must not hang init.
const askTimeout = 20 * time.Second

// need looks each program up on the host. A program found outside the
// jail's PATH is reached through a PATH entry; one outside the system
// directories also needs its installation readable ([sandbox] read_only).
func (t *tools) need(names ...string) {
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.missing = appendNew(t.missing, n)
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		t.reach(filepath.Dir(p), installDir(real))
	}
}

// reach records that a program in bin, installed under root, runs in the jail.
func (t *tools) reach(bin, root string) {
	if !slices.Contains(jailPath(), bin) {
		t.pathDir = appendNew(t.pathDir, bin)
	}
	if !jail.Visible(root) {
		t.ro = appendNew(t.ro, root)
	}
}

// installDir is the directory a program's installation lives in: the
// parent of its bin directory, else the directory itself.
func installDir(program string) string {
	d := filepath.Dir(program)
	if filepath.Base(d) == "bin" {
		return filepath.Dir(d)
	}
	return d
}

// jailPath is the PATH every jailed command starts with.
func jailPath() []string {
	for _, kv := range jail.Environment("/", nil, nil) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return strings.Split(v, ":")
		}
	}
	return nil
}

// env is what a command exports so that the jail finds the programs: a
// PATH that starts with the directories outside the jail's own PATH.
func (t *tools) env() []string {
	if len(t.pathDir) == 0 {
		return nil
	}
	q := make([]string, len(t.pathDir))
	for i, d := range t.pathDir {
		q[i] = shellQuote(d)
	}
	return []string{"PATH=" + strings.Join(q, ":") + ":$PATH"}
}

func (t *tools) todo() []string {
	var out []string
	if len(t.missing) > 0 {
		out = append(out, "install "+strings.Join(t.missing, ", ")+": the commands in hone.toml run "+plural(len(t.missing), "it", "them")+" and "+plural(len(t.missing), "it is", "they are")+" not on this machine's PATH")
	}
	return append(out, t.notes...)
}

// ask runs a toolchain's own query on the host and returns its trimmed output.
func ask(dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	// A go.mod or rust-toolchain file naming a toolchain not installed
	// here must not make a question download one.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "RUSTUP_AUTO_INSTALL=0")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
