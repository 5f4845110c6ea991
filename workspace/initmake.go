package workspace

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/internal/textwrap"
	"github.com/hone-perf/hone/workspace/layout"
)

// A Makefile says what it builds only when make runs it: recursive makes,
// variables from included files and $(shell ...) hide the programs from a
// reading of its text, and `make -n` prints commands in whatever form the
// project writes them (cd && cc, libtool). So for a Makefile project init
// runs the build it wrote, in the jail and on a copy of the working tree,
// and takes the executables that appeared as what the default goal builds.
// The same copy, built, answers what else only running shows: how much
// each test target would run (`make -n`, which runs only the recursive
// makes, in the jail too), and how the program takes a seeded input.

// makeProbe is one run of a Makefile project's build in the jail, at init.
type makeProbe struct {
	l        *layout.Layout
	src, out string          // the built copy and the build output, host paths
	before   map[string]bool // the files of the copy before the build
}

// probeMake builds the Makefile project l describes (in the repository at
// root) in the jail and rewrites l's unit gate, equivalence gate and bench
// from what the build made and what running it showed. What it cannot
// find out it leaves as the reading of the Makefile wrote it, and says
// why in l.Todo.
func probeMake(ctx context.Context, r *repo.Repo, l *layout.Layout) {
	if l.System != layout.Make || l.Build == nil {
		return
	}
	d, err := scratch.New(ctx, r.StatePath(repo.RunsArea), "init-")
	if err != nil {
		l.Todo = append(l.Todo, "hone init could not make a folder to build the project in ("+errs.ClipTo(err.Error(), 200)+"); check the gates and the bench in hone.toml by hand")
		return
	}
	defer func() { scratch.RemoveAll(d.Path); d.Release() }()
	p := &makeProbe{l: l, src: filepath.Join(d.Path, "src"), out: filepath.Join(d.Path, "out")}
	if err := p.copyTree(ctx, r.Root); err != nil {
		l.Todo = append(l.Todo, "hone init could not copy the project to build it ("+errs.ClipTo(err.Error(), 200)+"); check the gates and the bench in hone.toml by hand")
		return
	}
	res, err := p.run(ctx, l.Build.Run, "", jail.ReadWrite, jail.ReadWrite, 30*time.Minute)
	if err != nil {
		l.Todo = append(l.Todo, "hone init could not build the project in the jail ("+errs.ClipTo(err.Error(), 200)+"); check the build, the gates and the bench in hone.toml by hand")
		return
	}
	if !res.Success() {
		l.Todo = append(l.Todo, fmt.Sprintf("fix the build in hone.toml: run in the jail by hone init, `%s` %s: %s", l.Build.Run, res.Describe(), lastLine(res.Stderr.Tail(2000))))
		return
	}
	p.chooseUnit(ctx)
	p.chooseWorkload(ctx, p.programs())
}

// copyTree copies the working tree's files into p.src: those git tracks,
// and those it would track (not ignored) unless they are built objects or
// programs, which a build in the working tree left behind: copied, make
// would take them as built, and init would not see them appear.
func (p *makeProbe) copyTree(ctx context.Context, root string) error {
	tracked, err := git.Output(ctx, root, "ls-files", "-z", "--cached")
	if err != nil {
		return err
	}
	others, err := git.Output(ctx, root, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	p.before = map[string]bool{}
	for _, dir := range []string{p.src, p.out} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	untracked := map[string]bool{}
	for _, name := range strings.Split(others, "\x00") {
		untracked[name] = true
	}
	for _, name := range strings.Split(tracked+"\x00"+others, "\x00") {
		if name == "" || p.before[name] {
			continue
		}
		from, to := filepath.Join(root, filepath.FromSlash(name)), filepath.Join(p.src, filepath.FromSlash(name))
		fi, err := os.Lstat(from)
		if err != nil || fi.IsDir() {
			continue // deleted in the working tree, or a submodule
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(from)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(from)
			if err != nil {
				return err
			}
			if untracked[name] && (bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte("!<arch>\n"))) {
				continue
			}
			if err := os.WriteFile(to, b, fi.Mode().Perm()|0o644); err != nil {
				return err
			}
		default:
			continue
		}
		p.before[name] = true
	}
	return nil
}

// run runs command as a verdict runs its target's commands: in the
// target's folder of the checkout at /hone/src, the output at /hone/out,
// with seed (when set) as {seed} and HONE_SEED.
func (p *makeProbe) run(ctx context.Context, command, seed string, src, out jail.Mode, timeout time.Duration) (*jail.Result, error) {
	env := []string{"HONE_ROOT=/hone/src", "HONE_OUT=/hone/out", "HONE_TARGET=" + p.l.Name}
	if seed != "" {
		command = strings.ReplaceAll(command, "{seed}", seed)
		env = append(env, "HONE_SEED="+seed)
	}
	return jail.Run(ctx, jail.Spec{
		Command:  command,
		Dir:      path.Join("/hone/src", p.l.Path),
		Env:      env,
		Mounts:   []jail.Mount{{Host: p.src, Jail: "/hone/src", Mode: src}, {Host: p.out, Jail: "/hone/out", Mode: out}},
		ReadOnly: p.l.ReadOnly,
		Timeout:  timeout,
	})
}

// programs are the executables the build made, the likeliest workload
// first: one named like the target, then the shallowest. Test, fuzzing,
// benchmark and example programs are left out: they are not the project's
// program, and their folders are protected.
func (p *makeProbe) programs() []string {
	var found []string
	walk := func(base, prefix string) {
		filepath.WalkDir(base, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(base, file)
			rel = filepath.ToSlash(rel)
			if prefix == "" && p.before[rel] || notProgram().MatchString(strings.ToLower(rel)) {
				return nil
			}
			if fi, err := d.Info(); err != nil || fi.Mode().Perm()&0o111 == 0 || !isELF(file) {
				return nil
			}
			found = append(found, prefix+rel)
			return nil
		})
	}
	walk(p.src, "")
	walk(p.out, "$HONE_OUT/")
	slices.SortStableFunc(found, func(a, b string) int {
		an, bn := path.Base(a) == p.l.Name, path.Base(b) == p.l.Name
		switch {
		case an != bn && an:
			return -1
		case an != bn:
			return 1
		}
		if c := strings.Count(a, "/") - strings.Count(b, "/"); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return found
}

var notProgram = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|/)[^/]*(test|fuzz|bench|example|demo|sample)[^/]*(/|$)|\.so(\.|$)|\.(o|a|lo|la)$`)
})

func isELF(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4)
	_, err = f.Read(b)
	return err == nil && bytes.Equal(b, []byte("\x7fELF"))
}

// command is how the target's commands name program (as programs lists it).
func (p *makeProbe) command(program string) string {
	switch {
	case strings.HasPrefix(program, "$HONE_OUT/"):
		return program
	case p.l.Path == ".":
		return "./" + program
	case strings.HasPrefix(program, p.l.Path+"/"):
		return "./" + strings.TrimPrefix(program, p.l.Path+"/")
	}
	return "$HONE_ROOT/" + program
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return errs.ClipTo(s, 200)
}

// wrap breaks sentences into comment lines of at most 80 characters.
func wrap(text []string) []string {
	var out []string
	for _, t := range text {
		out = append(out, textwrap.Lines(t, 78)...)
	}
	return out
}
