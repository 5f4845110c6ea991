package build

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/scratch"
	"github.com/hone-perf/hone/sanitize"
)

// Role says whose tree a side holds. Only the baseline (the pin) is
// trusted to fill caches.
type Role string

const (
	Baseline  Role = "baseline"
	Candidate Role = "candidate"
)

// Side is one built tree of a run.
type Side struct {
	Role   Role
	Commit string
	Src    string // host folder of /hone/src
	Out    string // host folder of /hone/out
	// Result is the build command's; nil when the build was reused from
	// the cache or the target has no build command.
	Result *jail.Result
	Cached bool
	// Discarded names the first file of a cache entry that differed from
	// its manifest; the entry was thrown away and the baseline rebuilt.
	Discarded string
	// Failure says why the build is unusable although its command
	// succeeded (or could not start): it changed a tracked file, wrote a
	// protected one, or its modules could not be downloaded.
	Failure string
	// Outputs are the SHA-256 of the build output's files by path, as
	// hashed when hone took the tree back (at most MaxOutputs).
	Outputs map[string]string
	// Sanitizers are the sanitizers the side was built with (BuildSanitized);
	// nil for the plain build every other command uses.
	Sanitizers []string
	// BuildCPU is the CPU time of the build command's whole process tree
	// (the cached build's, for a baseline from the cache; 0 when unknown
	// or there is no build command): work a patch moves from its runs into
	// its build shows here.
	BuildCPU  time.Duration
	sanitized *sanitized
	// Layout is the layout the side was linked in (BuildLayout); nil for
	// the plain build.
	Layout *Layout
	// Relinked says the side is another layout's build with its links
	// done again in this one (BuildLayouts), not a build of its own.
	Relinked bool
	// Unmoved says why the side, built in a layout, has the plain build's
	// programs (BuildLayouts); "" when they moved.
	Unmoved string
	shim    string // host folder of shimDir, for a sanitizer or layout build
	// buildShim replaces shim for the build command only: the shim that
	// links the other layouts too; relinks is where they land.
	buildShim, relinks string
	// tree is what hone found in Src and Out after the build ("src/" and
	// "out/" before each path), to tell the files a layout changed.
	tree map[string]Entry
	run  *Run
}

// MaxOutputs bounds Side.Outputs.
const MaxOutputs = 64

func outputsOf(entries []Entry) map[string]string {
	out := map[string]string{}
	for _, e := range entries {
		if e.Type == typeFile && len(out) < MaxOutputs {
			out[e.Path] = e.SHA256
		}
	}
	return out
}

// OK reports whether the build gave a tree later commands may use.
func (s *Side) OK() bool { return s.Failure == "" && (s.Result == nil || s.Result.Success()) }

// Describe says in a few words why a build is not OK.
func (s *Side) Describe() string {
	if s.Failure != "" {
		return s.Failure
	}
	if s.Result != nil {
		return s.Result.Describe()
	}
	return "ok"
}

// Build makes the tree of commit for role and builds it in the jail. The
// baseline is taken from the build cache when an entry verifies, and is
// stored there after a clean build. A build command that fails is not an
// error, nor is a build that broke the rules: the caller reads OK and
// Describe. err is set when the build could not be attempted.
func (r *Run) Build(ctx context.Context, role Role, commit string) (*Side, error) {
	return r.build(ctx, role, commit, variant{})
}

// BuildSanitized is Build with the sanitizers of a gate (see package
// sanitize): the same build command, with the sanitizer flags in the
// environment and a compiler shim first on PATH, and no data limit. The
// side's gate runs get the same environment, PATH and limits. A
// baseline's sanitizer build is cached apart from its plain build.
func (r *Run) BuildSanitized(ctx context.Context, role Role, commit string, sanitizers []string) (*Side, error) {
	if err := sanitize.Check(sanitizers); err != nil {
		return nil, err
	}
	return r.build(ctx, role, commit, variant{sanitizers: slices.Compact(slices.Sorted(slices.Values(sanitizers)))})
}

// variant is what a build adds to the plain one: sanitizers or a layout,
// and the layouts its links are done again in (BuildLayouts).
type variant struct {
	sanitizers []string
	layout     *Layout
	relink     []Layout
	// plain is the plain build a layout build's programs are compared
	// with, to say why they did not move (Side.Unmoved), in the cache too.
	plain *Side
}

func (r *Run) build(ctx context.Context, role Role, commit string, v variant) (*Side, error) {
	name, sanitizers := string(role), v.sanitizers
	if sanitizers != nil {
		name += "-" + strings.Join(sanitizers, "-")
	}
	if v.layout != nil {
		name += fmt.Sprintf("-layout-%d", v.layout.Index)
	}
	base := filepath.Join(r.dir.Path, name)
	if err := os.Mkdir(base, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", base)
	}
	s := &Side{Role: role, Commit: commit, Src: filepath.Join(base, "src"), Out: filepath.Join(base, "out"), Sanitizers: sanitizers, Layout: v.layout, run: r}
	c, err := r.repo.Store("").ReadCommit(repo.NewHash(commit))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read commit %s", git.Short(commit))
	}
	if sanitizers != nil {
		s.shim = filepath.Join(base, "shim")
		if s.sanitized, err = r.sanitizer(c, s.shim, sanitizers); err != nil {
			return nil, err
		}
	}
	if l := v.layout; l != nil && l.Pad > 0 {
		s.shim = filepath.Join(base, "shim")
		if err := r.layoutShim(s.shim, *l, nil); err != nil {
			return nil, err
		}
		if len(v.relink) > 0 {
			s.buildShim, s.relinks = filepath.Join(base, "relink-shim"), filepath.Join(base, "layouts")
			if err := r.layoutShim(s.buildShim, *l, v.relink); err != nil {
				return nil, err
			}
			if err := os.Mkdir(s.relinks, 0o755); err != nil {
				return nil, errs.Wrap(errs.Failure, err, "cannot create %s", s.relinks)
			}
		}
	}
	cached := role == Baseline
	key := Key{Tree: c.Tree.String(), Command: r.target.Build, TargetPath: r.target.Path, Isolation: r.sandbox.Isolation, Sanitizers: sanitize.Key(sanitizers)}
	if v.layout != nil {
		key.Layout = v.layout.cacheKey()
	}
	if cached {
		m, discarded, err := r.cache().load(ctx, key, s.Src, s.Out)
		if err != nil {
			return nil, err
		}
		s.Discarded = discarded
		if m != nil {
			s.Cached, s.Outputs, s.BuildCPU = true, outputsOf(m.Out), m.BuildCPU
			s.tree, s.Unmoved = treeOf(m.Src, m.Out), m.Unmoved
			r.grow(s)
			return s, nil
		}
	}
	want, err := materialize(r.repo.Store(""), commit, s.Src)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(s.Out, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", s.Out)
	}
	if r.target.Build != "" {
		if msg, err := r.goModDownload(ctx, s.Src); err != nil {
			return nil, err
		} else if msg != "" {
			s.Failure = msg
			return s, nil
		}
		if err := r.runBuild(ctx, s); err != nil {
			return nil, err
		}
		if !s.OK() {
			return s, nil
		}
	}
	src, err := sealAndScan(s.Src, r.owner, func(p string) bool { _, ok := want[p]; return ok })
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read back the built checkout")
	}
	out, err := sealAndScan(s.Out, r.owner, func(string) bool { return false })
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read back the build output")
	}
	if v := checkSources(src, want, r.target.Rules()); v != "" {
		s.Failure = v
		return s, nil
	}
	s.Outputs, s.tree = outputsOf(out.entries), treeOf(src.entries, out.entries)
	if v.plain != nil && s.OutputsDigest() == v.plain.OutputsDigest() {
		s.Unmoved = s.unmoved()
	}
	r.scratch = max(r.scratch, 2*max(src.bytes, out.bytes)+256<<20)
	if cached {
		if r.target.Build != "" {
			if _, err := mergeGoCache(ctx, filepath.Join(base, "goputs"), r.goCache); err != nil {
				return nil, err
			}
		}
		m := manifest{Version: manifestVersion, Key: key, Created: time.Now().UTC(), Src: src.entries, Out: out.entries, BuildCPU: s.BuildCPU, Unmoved: s.Unmoved}
		if err := r.cache().store(ctx, m, s.Src, s.Out); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// grow makes room in the run's scratch areas for a private copy of a tree
// taken from the cache.
func (r *Run) grow(s *Side) {
	r.scratch = max(r.scratch, 2*max(scratch.Size(s.Src), scratch.Size(s.Out))+256<<20)
}

// runBuild runs the build command with src and out writable. A baseline's
// Go cache puts go to a staging folder hone merges afterwards; a
// candidate's stay in a private copy that is thrown away.
func (r *Run) runBuild(ctx context.Context, s *Side) error {
	puts := jail.Mount{Host: r.empty, Jail: goPutsDir, Mode: jail.Copy}
	if s.Role == Baseline {
		staging := filepath.Join(filepath.Dir(s.Src), "goputs")
		if err := os.Mkdir(staging, 0o755); err != nil {
			return errs.Wrap(errs.Failure, err, "cannot create %s", staging)
		}
		puts = jail.Mount{Host: staging, Jail: goPutsDir, Mode: jail.ReadWrite}
	}
	shim := s.shim
	if s.buildShim != "" {
		s.shim = s.buildShim
	}
	spec := s.spec(r.target.Build, Timeout, jail.ReadWrite, puts)
	s.shim = shim
	if s.relinks != "" {
		spec.Mounts = append(spec.Mounts, jail.Mount{Host: s.relinks, Jail: relinkDir, Mode: jail.ReadWrite})
	}
	res, err := jail.Run(ctx, spec)
	r.note(res)
	if err != nil {
		return err
	}
	s.Result, s.BuildCPU = res, res.CPU()
	return nil
}

// Spec is the jail spec of a gate, bench run or profile workload on this
// side: a private copy of the built checkout, the output read-only.
func (s *Side) Spec(command string, timeout time.Duration) jail.Spec {
	return s.spec(command, timeout, jail.Copy, jail.Mount{Host: s.run.empty, Jail: goPutsDir, Mode: jail.Copy})
}

// WritableSpec is Spec with the checkout and the output writable in
// place, for a profile workload that writes its own profile there. Only
// the run's own copies are written; the build cache is never shown.
func (s *Side) WritableSpec(command string, timeout time.Duration) jail.Spec {
	return s.spec(command, timeout, jail.ReadWrite, jail.Mount{Host: s.run.empty, Jail: goPutsDir, Mode: jail.Copy})
}

func (s *Side) spec(command string, timeout time.Duration, tree jail.Mode, puts jail.Mount) jail.Spec {
	r := s.run
	outMode := jail.ReadOnly
	if tree == jail.ReadWrite {
		outMode = jail.ReadWrite
	}
	mods := r.empty
	if dir := r.repo.StatePath(modCacheName); isGoTarget(s.Src, r.target.Path) && isDir(dir) {
		mods = dir
	}
	spec := jail.Spec{
		Command: command,
		Dir:     path.Join(SrcDir, r.target.Path),
		Env:     s.Env(),
		Mounts: []jail.Mount{
			{Host: s.Src, Jail: SrcDir, Mode: tree},
			{Host: s.Out, Jail: OutDir, Mode: outMode},
			{Host: r.tool, Jail: toolDir + "/" + goCacheProgName, Mode: jail.ReadOnly},
			{Host: r.goCache, Jail: goCacheDir, Mode: jail.ReadOnly},
			puts,
			{Host: mods, Jail: goModDir, Mode: jail.ReadOnly},
		},
		Path:      toolPath(r.sandbox.ReadOnly),
		ReadOnly:  r.sandbox.ReadOnly,
		Timeout:   timeout,
		Network:   r.sandbox.Network,
		Isolation: r.sandbox.Isolation,
		Limits:    jail.Limits{Scratch: r.scratch},
	}
	if s.shim != "" {
		spec.Mounts = append(spec.Mounts, jail.Mount{Host: s.shim, Jail: shimDir, Mode: jail.ReadOnly})
		spec.Path = append([]string{shimDir}, spec.Path...)
	}
	if s.sanitized != nil {
		spec.Limits.Data = jail.NoLimit
		// LeakSanitizer stops the threads it checks with ptrace.
		spec.Seccomp.Ptrace = true
	}
	return spec
}

// Env is the HONE_* and Go environment every command of the run gets,
// whatever its kind and side: a command cannot tell a gate from a bench
// run, or the baseline from the candidate, by its environment.
func (s *Side) Env() []string {
	env := []string{
		"HONE_ROOT=" + SrcDir,
		"HONE_OUT=" + OutDir,
		"HONE_TARGET=" + s.run.target.Name,
		"GOFLAGS=-mod=readonly",
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOCACHEPROG=" + toolDir + "/" + goCacheProgName,
		"GOCACHE=/tmp/go-build",
		"GOMODCACHE=" + goModDir,
		envGoCache + "=" + goCacheDir,
		envGoCachePuts + "=" + goPutsDir,
	}
	if s.sanitized != nil {
		env = s.sanitized.merge(env)
	}
	if s.Layout != nil && s.Layout.Order != 0 {
		for i, kv := range env {
			if strings.HasPrefix(kv, "GOFLAGS=") {
				env[i] = fmt.Sprintf("%s -ldflags=-randlayout=%d", kv, s.Layout.Order)
			}
		}
	}
	return env
}

// inTree splits a jail path below /hone/src or /hone/out into the side's
// folder and the path below it; ok is false for any other path, and for
// one that climbs out with "..".
func (s *Side) inTree(p string) (root, rel string, ok bool) {
	p = filepath.Clean(p)
	for _, m := range [][2]string{{SrcDir, s.Src}, {OutDir, s.Out}} {
		if rest, found := strings.CutPrefix(p, m[0]+"/"); found {
			return m[1], rest, true
		}
	}
	return "", "", false
}

// Remove removes the file at a jail path of the side's trees, never through
// a symlink the build left; other paths are refused.
func (s *Side) Remove(p string) error {
	root, rel, ok := s.inTree(p)
	if !ok {
		return errs.Invalidf("%s is not in the checkout or the build output", p)
	}
	return RemoveInTree(root, rel)
}

// Open opens a file by its path in the jail: below /hone/src or /hone/out
// from the side's folders, without following any symlink (they were
// written by the build); any other path (a system library) where it is.
func (s *Side) Open(p string) (*os.File, error) {
	if root, rel, ok := s.inTree(p); ok {
		return OpenInTree(root, rel)
	}
	return os.Open(p)
}

var errNoGoMod = errors.New("no go.mod")

// goModDownload fills hone's module cache for a Go target, outside the
// jail and as hone, since the jail may not reach the network or write the
// module cache. The module is the one whose go.mod is nearest above the
// target's folder, as go itself would find it. msg is set when the
// download failed: the build cannot succeed without its modules.
func (r *Run) goModDownload(ctx context.Context, src string) (msg string, err error) {
	dir, err := findGoMod(src, r.target.Path)
	if errors.Is(err, errNoGoMod) {
		return "", nil
	}
	if err != nil {
		return "", errs.Wrap(errs.Failure, err, "cannot look for go.mod")
	}
	goBin, lerr := lookGo()
	if lerr != nil {
		return "", nil
	}
	mods, err := r.repo.StateDir(modCacheName)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := goCommand(ctx, goBin, dir, "mod", "download")
	cmd.Env = append(cmd.Env, "GOMODCACHE="+mods)
	if proxy := userModProxy(); proxy != "" {
		cmd.Env = append(cmd.Env, "GOPROXY="+proxy)
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", errs.Wrap(errs.Failure, ctx.Err(), "go mod download interrupted")
	}
	if err != nil {
		rel, _ := filepath.Rel(src, dir)
		return fmt.Sprintf("go mod download in %s failed: %s", rel, lastLine(out)), nil
	}
	return "", nil
}

// findGoMod walks up from the target's folder to the checkout's top level,
// without following symlinks: go.mod must be a regular file of the tree.
func findGoMod(src, targetPath string) (string, error) {
	rel := filepath.FromSlash(targetPath)
	for {
		dir := filepath.Join(src, rel)
		fi, err := os.Lstat(filepath.Join(dir, "go.mod"))
		if err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		if rel == "." {
			return "", errNoGoMod
		}
		rel = filepath.Dir(rel)
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return errs.ClipTo(lines[len(lines)-1], 300)
}

// toolPath is hone's own PATH as far as the jail can see it: the entries
// inside the system directories or a read_only path, in order, so that the
// jail finds the toolchains (/usr/local/go/bin) hone would.
func toolPath(readOnly []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(d) || filepath.Clean(d) != d || seen[d] {
			continue
		}
		visible := jail.Visible(d)
		for _, ro := range readOnly {
			visible = visible || d == ro || strings.HasPrefix(d, ro+"/")
		}
		if visible {
			out = append(out, d)
			seen[d] = true
		}
	}
	return out
}
