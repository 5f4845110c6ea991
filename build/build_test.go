package build

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/testgit"
	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/workspace"
)

// fixture is a repository with one target and the workspace read from it.
type fixture struct {
	t   *testing.T
	ws  *workspace.Workspace
	pin string
}

func newFixture(t *testing.T, files map[string]string, toml string) *fixture {
	t.Helper()
	all := map[string]string{"hone.toml": toml}
	for k, v := range files {
		all[k] = v
	}
	dir := testgit.NewRepo(t, all)
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ws: ws, pin: testgit.Git(t, dir, "rev-parse", "HEAD")}
}

// commit commits the working tree after edits and returns the commit.
func (f *fixture) commit(files map[string]string) string {
	f.t.Helper()
	testgit.WriteFiles(f.t, f.ws.Root, files)
	testgit.Git(f.t, f.ws.Root, "add", "-A")
	testgit.Git(f.t, f.ws.Root, "commit", "-q", "-m", "change")
	return testgit.Git(f.t, f.ws.Root, "rev-parse", "HEAD")
}

func (f *fixture) start(keep bool) *Run {
	f.t.Helper()
	t, err := f.ws.Target("t")
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := Start(context.Background(), f.ws.Repo, t, f.ws.Config.Sandbox, "test", keep)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { r.Close() })
	return r
}

func (f *fixture) build(r *Run, role Role, commit string) *Side {
	f.t.Helper()
	s, err := r.Build(context.Background(), role, commit)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// run runs command on side s as a gate would, and returns its stdout.
func run(t *testing.T, s *Side, command string) (string, *jail.Result) {
	t.Helper()
	res, err := jail.Run(context.Background(), s.Spec(command, 0))
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout.Bytes()), res
}

const cTarget = `[targets.t]
protect = ["testdata/**"]
build = "cc -O2 -o $HONE_OUT/prog prog.c && ls $HONE_ROOT/targets/t > $HONE_OUT/listing"
`

var cFiles = map[string]string{
	"targets/t/prog.c":          "#include <stdio.h>\nint main(void){puts(\"hi\");return 0;}\n",
	"targets/t/testdata/golden": "hi\n",
	"targets/t/link":            "",
	"other/readme":              "not the target\n",
}

// The checkout is the commit's tree written from git's objects: no .git,
// symlinks as symlinks, modes kept, and no filter of the repository's own
// configuration runs while it is made.
func TestCheckoutIsTheTreeWithoutGit(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	files := map[string]string{}
	for k, v := range cFiles {
		files[k] = v
	}
	delete(files, "targets/t/link")
	f := newFixture(t, files, cTarget)
	os.Symlink("prog.c", filepath.Join(f.ws.Root, "targets/t/link"))
	os.WriteFile(filepath.Join(f.ws.Root, "targets/t/run.sh"), []byte("#!/bin/sh\n"), 0o755)
	pin := f.commit(nil)
	marker := filepath.Join(t.TempDir(), "smudged")
	testgit.Git(t, f.ws.Root, "config", "filter.x.smudge", "touch "+marker+"; cat")
	os.WriteFile(filepath.Join(f.ws.Root, ".git/info/attributes"), []byte("* filter=x\n"), 0o644)

	s := f.build(f.start(false), Candidate, pin)
	if !s.OK() {
		t.Fatalf("build: %s\n%s", s.Describe(), s.Result.Stderr.Tail(2000))
	}
	if _, err := os.Lstat(filepath.Join(s.Src, ".git")); !os.IsNotExist(err) {
		t.Errorf("the checkout has a .git: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(s.Src, "targets/t/link")); err != nil || target != "prog.c" {
		t.Errorf("symlink: %q, %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(s.Src, "targets/t/run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("executable lost its mode: %v %v", fi, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the repository's smudge filter ran while hone made the checkout")
	}
	if out, _ := run(t, s, "$HONE_OUT/prog"); out != "hi\n" {
		t.Errorf("built program printed %q", out)
	}
}

// A build that edits a tracked file (here the golden file a gate compares
// against), deletes one, or writes a new file under protect, is refused,
// naming the file.
func TestBuildCannotRewriteTheCheckout(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	for _, tc := range []struct{ name, build, want string }{
		{"rewrite the golden file", "echo forged > testdata/golden", "changed the tracked file targets/t/testdata/golden"},
		{"rewrite another target's file", "echo x >> $HONE_ROOT/other/readme", "changed the tracked file other/readme"},
		{"delete a source", "rm prog.c", "deleted or replaced the tracked file targets/t/prog.c"},
		{"replace a folder with a link", "mv testdata td && ln -s td testdata", "deleted or replaced the tracked file targets/t/testdata/golden"},
		{"chmod a source", "chmod +x prog.c", "changed the tracked file targets/t/prog.c (mode 100755, was 100644)"},
		{"add a protected file", "echo more > testdata/golden2", "wrote targets/t/testdata/golden2, which protect pattern \"testdata/**\" covers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, cFiles, strings.Replace(cTarget, `listing"`, `listing && `+tc.build+`"`, 1))
			s := f.build(f.start(false), Candidate, f.pin)
			if s.OK() || !strings.Contains(s.Failure, tc.want) {
				t.Errorf("failure %q, want %q", s.Failure, tc.want)
			}
		})
	}
}

// Gates see a private copy of the checkout, thrown away after each run,
// and the build output read-only: nothing one run writes reaches the next.
func TestRunsCannotRememberAnythingInTheirTrees(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, cFiles, cTarget)
	s := f.build(f.start(false), Candidate, f.pin)
	if !s.OK() {
		t.Fatal(s.Describe())
	}
	out, res := run(t, s, "echo remembered > note; echo x > $HONE_OUT/note; cat note")
	if out != "remembered\n" || !strings.Contains(string(res.Stderr.Bytes()), "Read-only file system") {
		t.Fatalf("first run: %q, stderr %q", out, res.Stderr.Bytes())
	}
	if out, _ := run(t, s, "cat note $HONE_OUT/note 2>&1; pwd; echo $HONE_ROOT $HONE_OUT"); out != "cat: note: No such file or directory\ncat: /hone/out/note: No such file or directory\n/hone/src/targets/t\n/hone/src /hone/out\n" {
		t.Errorf("second run saw: %q", out)
	}
	if _, err := os.Lstat(filepath.Join(s.Src, "targets/t/note")); !os.IsNotExist(err) {
		t.Errorf("the run wrote the host checkout: %v", err)
	}
}

// A build's set-uid file never reaches the host as one, and when hone is
// root the whole built tree is root's, so the jail user cannot write it.
// What the build shut even to its owner is opened up for gates to read.
func TestBuildCannotLeaveASetuidProgramOnTheHost(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, cFiles, strings.Replace(cTarget, `build = "`, `build = "cp /bin/true $HONE_OUT/su && chmod 4755 $HONE_OUT/su && mkdir $HONE_OUT/shut && touch $HONE_OUT/shut/f && chmod 0 $HONE_OUT/shut/f $HONE_OUT/shut && `, 1))
	s := f.build(f.start(false), Candidate, f.pin)
	if !s.OK() {
		t.Fatal(s.Describe())
	}
	fi, err := os.Lstat(filepath.Join(s.Out, "su"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
		t.Errorf("mode %v", fi.Mode())
	}
	if out, res := run(t, s, "ls $HONE_OUT/shut && cat $HONE_OUT/shut/f"); out != "f\n" || !res.Success() {
		t.Errorf("a gate cannot read what the build shut: %q %s", out, res.Stderr.Bytes())
	}
	if os.Geteuid() == 0 {
		filepath.Walk(s.Out, func(p string, fi os.FileInfo, err error) error {
			if err == nil && ownerOf(fi) != 0 {
				t.Errorf("%s belongs to uid %d", p, ownerOf(fi))
			}
			return nil
		})
	}
}

// A run folder that cannot be removed (here a mount inside it keeps it
// busy) is not dropped silently: the caller is told, and hone gc names it
// as what it will remove.
func TestRunFolderLeftBehindIsReported(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs inside the run folder needs root")
	}
	f := newFixture(t, cFiles, cTarget)
	r := f.start(false)
	busy := filepath.Join(r.Dir(), "busy")
	if err := os.Mkdir(busy, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "none", busy).CombinedOutput(); err != nil {
		t.Skipf("mount: %v %s", err, out)
	}
	defer func() {
		exec.Command("umount", busy).Run()
		os.RemoveAll(r.Dir())
	}()
	var got []errs.Warning
	r.CloseWarning(func(w errs.Warning) { got = append(got, w) })
	if len(got) != 1 || got[0].Code != "run_folder_left" || !strings.Contains(got[0].Message, r.Dir()) || !strings.Contains(got[0].Message, "hone gc") {
		t.Fatalf("warnings %+v", got)
	}
}
