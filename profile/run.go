package profile

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/ledger"
	"github.com/hone-perf/hone/workspace"
)

// DefaultFrequency is the sampling rate when neither the flag nor hone.toml
// sets one: odd, so sampling does not beat in step with 1 kHz timers.
const DefaultFrequency = 1999

// Options tune one profile run.
type Options struct {
	Frequency int          // Hz; 0 means [targets.X.profile] frequency, else DefaultFrequency
	PprofOut  string       // also write the gzipped pprof here
	Progress  func(string) // told each step as it starts; may be nil
	// Warnings, when set, is told what the caller should show.
	Warnings func(errs.Warning)
}

// Run profiles target at its pin: it builds the pin in a run folder
// (reusing the baseline build cache), runs the profile workload in the jail
// under perf record (or lets it write its own pprof), counts one more run
// with perf stat, and appends the result to the ledger. perf runs inside
// the jail, as the jail's unprivileged user; hone reads the binaries it
// names from the run's folders.
func Run(ctx context.Context, ws *workspace.Workspace, target string, opt Options) (*Entry, error) {
	step := func(s string) {
		if opt.Progress != nil {
			opt.Progress(s)
		}
	}
	t, err := ws.Target(target)
	if err != nil {
		return nil, err
	}
	command, err := workload(t)
	if err != nil {
		return nil, err
	}
	freq := cmp.Or(opt.Frequency, t.Profile.Frequency, DefaultFrequency)
	perf, err := probePerf(ctx)
	if err != nil && t.Profile.Format != "pprof" {
		return nil, err
	}
	pin, err := ws.ResolvePin(ctx, t)
	if err != nil {
		return nil, err
	}
	env := environment(perf)

	step("checking out " + git.Short(pin))
	run, err := build.Start(ctx, ws.Repo, t, ws.Config.Sandbox, "profile", false)
	if err != nil {
		return nil, err
	}
	defer run.CloseWarning(opt.Warnings)
	step("building")
	side, err := run.Build(ctx, build.Baseline, pin)
	if err != nil {
		return nil, err
	}
	if !side.OK() {
		return nil, buildFailed(t, side)
	}
	dir := filepath.Join(run.Dir(), "perf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create %s", dir)
	}

	seed, err := build.NewSeed()
	if err != nil {
		return nil, err
	}
	r := &runner{t: t, side: side, dir: dir, tmp: run.Dir(), command: command, step: step, writable: t.Profile.Format == "pprof", seed: seed}
	e := &Entry{Command: command, Environment: env, Pprof: AttachmentName, InputSeed: seed}
	var p *profile.Profile
	if t.Profile.Format == "pprof" {
		step("running the workload")
		p, err = r.ingest(ctx, e)
	} else {
		step("recording with perf (" + perf.event + ")")
		p, err = r.recordStacks(ctx, perf, freq, e)
	}
	if err != nil {
		return nil, err
	}
	if perf != nil {
		step("counting with perf stat")
		if e.Counters, err = r.count(ctx, perf); err != nil {
			return nil, err
		}
	}
	if err := e.summarize(p, side); err != nil {
		return nil, err
	}
	if w := noLines(e.Hotspots); w != nil && opt.Warnings != nil {
		opt.Warnings(*w)
	}
	var gz bytes.Buffer
	if err := p.Write(&gz); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot encode the pprof profile")
	}
	if opt.PprofOut != "" {
		if err := os.WriteFile(opt.PprofOut, gz.Bytes(), 0o644); err != nil {
			return nil, errs.Wrap(errs.Failure, err, "cannot write %s", opt.PprofOut)
		}
	}
	e.Kind, e.Target, e.Pin = ledger.KindProfile, t.Name, pin
	step("recording in the ledger")
	st, err := ledger.Open(ws).Append(ctx, e, ledger.Attachment{Name: AttachmentName, Data: gz.Bytes()})
	if err != nil {
		return nil, err
	}
	e.Common = st.Common
	return e, nil
}

// workload is the profile command: [targets.X.profile] run, else the bench run.
func workload(t *workspace.Target) (string, error) {
	command := cmp.Or(t.Profile.Run, t.Bench.Run)
	if strings.TrimSpace(command) == "" {
		return "", errs.Invalidf("target %q has no profile or bench command; add [targets.%s.profile] run = \"...\" to %s", t.Name, t.Name, workspace.FileName)
	}
	return command, nil
}

// summarize fills the hotspots (the top MaxHotspots), the sample count and
// the binary of e from p.
func (e *Entry) summarize(p *profile.Profile, side *build.Side) error {
	hs, sum, err := Hotspots(p)
	if err != nil {
		return err
	}
	if len(hs) > MaxHotspots {
		hs = hs[:MaxHotspots]
	}
	e.Hotspots, e.Samples, e.ValueType = hs, sum.Samples, sum.ValueType
	e.Binary, e.BinaryHash = mainBinary(p, side)
	return nil
}

type runner struct {
	t       *workspace.Target
	side    *build.Side
	dir     string // the run's folder perf writes in, /hone/perf in the jail
	tmp     string // a folder of the run for hone's own probes
	command string
	step    func(string)
	// writable gives the workload its checkout and output in place: a
	// workload that writes its own pprof (format = "pprof") writes there.
	writable bool
	seed     int64 // the input seed of the workload, as a verdict's bench gets one
}

// perfMount is where perf writes its data and hone's copy of perf script's
// reading of it, in the jail.
const perfMount = "/hone/perf"

// run runs shell in the jail like a bench run of the pin, with the perf
// folder writable; under tool (perf record or stat) when one is given.
func (r *runner) run(ctx context.Context, what, tool, shell string) (*jail.Result, error) {
	spec := r.side.Spec(shell, r.t.Bench.Timeout.Duration)
	if r.writable {
		spec = r.side.WritableSpec(shell, r.t.Bench.Timeout.Duration)
	}
	spec.Tool = tool
	spec.Mounts = append(spec.Mounts, jail.Mount{Host: r.dir, Jail: perfMount, Mode: jail.ReadWrite})
	res, err := jail.Run(ctx, build.WithSeed(spec, r.seed))
	if err != nil {
		return nil, err
	}
	if !res.Success() {
		if bytes.Contains(res.Stderr.Tail(4096), []byte("perf_event_paranoid")) {
			return nil, errParanoid(paranoid())
		}
		return nil, commandFailed(what, r.command, r.t, res)
	}
	return res, nil
}

// open reads a file perf or the workload wrote in the perf folder.
func (r *runner) open(name string) (*os.File, error) { return build.OpenInTree(r.dir, name) }

func (r *runner) paths() Paths { return Paths{Root: build.SrcDir, Open: r.side.Open} }

// record runs the workload under perf record, unwinding stacks the way
// callGraph names, then perf script in the jail too, where the binaries
// are at the paths perf recorded, and converts its reading.
func (r *runner) record(ctx context.Context, perf *perfSetup, freq int, callGraph string, e *Entry) (*profile.Profile, error) {
	data := perfMount + "/perf.data"
	res, err := r.run(ctx, "profile workload", perf.recordTool(data, freq, callGraph), r.command)
	if err != nil {
		return nil, err
	}
	e.Source, e.Event, e.Hardware, e.Isolation = "perf", perf.event, perf.hardware, res.Isolation
	e.Frequency, e.CallGraph = freq, callGraph
	if _, err := r.run(ctx, "perf script", "", perf.scriptCommand(data, perfMount+"/script.txt")); err != nil {
		return nil, err
	}
	f, err := r.open("script.txt")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "perf script wrote no output")
	}
	defer f.Close()
	return ConvertPerfScript(f, r.paths())
}

// ingest runs the workload, which writes its own pprof profile to
// [targets.X.profile] output, and reads that file.
func (r *runner) ingest(ctx context.Context, e *Entry) (*profile.Profile, error) {
	vars := map[string]string{}
	for _, kv := range r.side.Env() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	path := os.Expand(r.t.Profile.Output, func(k string) string { return vars[k] })
	if !filepath.IsAbs(path) {
		path = filepath.Join(build.SrcDir, r.t.Path, path)
	}
	// The output folder came from the build: a file left by the build must
	// not pass for this run's profile.
	if err := r.side.Remove(path); errs.Is(err, errs.Invalid) {
		return nil, errs.Invalidf("[targets.%s.profile] output = %q is not in the checkout or $HONE_OUT, where the workload may write", r.t.Name, r.t.Profile.Output)
	} else if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot remove the previous %s", r.t.Profile.Output)
	}
	res, err := r.run(ctx, "profile workload", "", r.command)
	if err != nil {
		return nil, err
	}
	f, err := r.side.Open(path)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "the profile workload wrote no pprof file at [targets.%s.profile] output = %q; make the command write it (Go: -cpuprofile)", r.t.Name, r.t.Profile.Output)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "%s is not a pprof profile", r.t.Profile.Output)
	}
	for _, fn := range p.Function {
		fn.Filename = r.paths().rel(fn.Filename)
	}
	vi, _ := valueIndex(p)
	e.Source, e.Isolation = "pprof", res.Isolation
	if vi >= 0 {
		e.Event = p.SampleType[vi].Type
	}
	return p, nil
}

// count runs the workload once under perf stat.
func (r *runner) count(ctx context.Context, perf *perfSetup) ([]Counter, error) {
	if _, err := r.run(ctx, "profile workload", perf.statTool(perfMount+"/stat.csv"), r.command); err != nil {
		return nil, err
	}
	f, err := r.open("stat.csv")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "perf stat wrote no output")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot read perf stat's output")
	}
	return parseStat(b), nil
}

// commandFailed is the one-line error for a build or workload that did not
// exit 0: the command, how it ended, and the end of its stderr.
func commandFailed(what, command string, t *workspace.Target, res *jail.Result) error {
	tail := strings.Join(strings.Fields(string(res.Stderr.Tail(400))), " ")
	if tail != "" {
		tail = "; stderr ends: " + tail
	}
	fix := "[targets." + t.Name + ".profile] run (it defaults to the bench run)"
	if what == "build" {
		fix = "[targets." + t.Name + "] build"
	}
	return errs.Failuref("%s `%s` in %s: %s%s; fix %s so it exits 0", what, command, t.Path, res.Describe(), tail, fix)
}

// buildFailed is commandFailed for a build, or the rule it broke.
func buildFailed(t *workspace.Target, side *build.Side) error {
	if side.Failure != "" {
		return errs.Failuref("the build of %s at its pin cannot be used: %s; fix [targets.%s] build", t.Name, side.Failure, t.Name)
	}
	return commandFailed("build", t.Build, t, side.Result)
}

// mainBinary names the mapped file with the most leaf samples that lies in
// the build output (as "$HONE_OUT/...") or the checkout (as a path relative
// to it), and hashes it. A profile whose hottest code is outside both (an
// interpreter, a system library) names none.
func mainBinary(p *profile.Profile, side *build.Side) (string, string) {
	for _, m := range p.Mapping {
		name := ""
		if rel := relTo(build.OutDir, m.File); rel != m.File {
			name = "$HONE_OUT/" + rel
		} else if rel := relTo(build.SrcDir, m.File); rel != m.File {
			name = rel
		} else {
			continue
		}
		f, err := side.Open(m.File)
		if err != nil {
			continue
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			continue
		}
		return name, hex.EncodeToString(h.Sum(nil))
	}
	return "", ""
}

// noLines is the hint for a profile whose hotspots have no file:line: the
// program was built without debug information, which perf needs to map
// addresses to source lines.
func noLines(hs []Hotspot) *errs.Warning {
	if len(hs) == 0 {
		return nil
	}
	for _, h := range hs {
		if h.File != "" {
			return nil
		}
	}
	return &errs.Warning{Code: "no_debug_info", Message: "no hotspot has a file:line: the build has no debug information; add -g to its compile flags (CFLAGS, or the build command in hone.toml) to see where in the source the time goes"}
}
