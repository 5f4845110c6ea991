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

	"github.com/hone-perf/hone/internal/checkout"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
	"github.com/hone-perf/hone/internal/sandbox"
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
}

// Run profiles target at its pin: it builds the pin in a hone-managed checkout
// (reusing the baseline build cache), runs the profile workload under perf
// record (or lets it write its own pprof), counts one more run with perf stat,
// and appends the result to the ledger.
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
	if iso, _ := sandbox.Probe(ws.Config.Sandbox.Network); perf != nil && strings.Contains(iso, "pidns") {
		if err := perf.inPIDNamespace(); err != nil {
			return nil, err
		}
	}
	pin, err := ws.ResolvePin(ctx, t)
	if err != nil {
		return nil, err
	}
	env := environment(perf)

	step("checking out " + git.Short(pin))
	co, err := checkout.New(ctx, ws.Repo, pin)
	if err != nil {
		return nil, err
	}
	defer co.Remove(context.WithoutCancel(ctx))
	step("building")
	built, err := checkout.Build(ctx, ws, t, co, true)
	if err != nil {
		return nil, err
	}
	if !built.OK() {
		return nil, commandFailed("build", t.Build, t, built.Result)
	}
	tmp, err := os.MkdirTemp("", "hone-profile-")
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot create a temporary directory")
	}
	defer os.RemoveAll(tmp)

	r := &runner{ws: ws, t: t, co: co, out: built.Out, tmp: tmp, command: command, step: step}
	e := &Entry{Command: command, Environment: env, Pprof: AttachmentName}
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
	if err := e.summarize(p, co.Dir, built.Out); err != nil {
		return nil, err
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
func (e *Entry) summarize(p *profile.Profile, root, out string) error {
	hs, sum, err := Hotspots(p)
	if err != nil {
		return err
	}
	if len(hs) > MaxHotspots {
		hs = hs[:MaxHotspots]
	}
	e.Hotspots, e.Samples, e.ValueType = hs, sum.Samples, sum.ValueType
	e.Binary, e.BinaryHash = mainBinary(p, root, out)
	return nil
}

type runner struct {
	ws      *workspace.Workspace
	t       *workspace.Target
	co      *checkout.Checkout
	out     string // HONE_OUT
	tmp     string
	command string
	step    func(string)
}

func (r *runner) run(ctx context.Context, what, shell string) (*sandbox.Result, error) {
	res, err := sandbox.Run(ctx, r.co.Spec(r.ws, r.t, r.out, shell, r.t.Bench.Timeout.Duration))
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

func (r *runner) paths() Paths {
	return Paths{Root: r.co.Dir, Checkouts: filepath.Dir(r.co.Dir)}
}

// record runs the workload under perf record, unwinding stacks the way
// callGraph names, and converts perf script's reading of it.
func (r *runner) record(ctx context.Context, perf *perfSetup, freq int, callGraph string, e *Entry) (*profile.Profile, error) {
	data := filepath.Join(r.tmp, "perf.data")
	res, err := r.run(ctx, "profile workload", perf.recordCommand(data, freq, callGraph, r.command))
	if err != nil {
		return nil, err
	}
	e.Source, e.Event, e.Hardware, e.Isolation = "perf", perf.event, perf.hardware, res.Isolation
	e.Frequency, e.CallGraph = freq, callGraph
	cmd := perf.scriptCommand(ctx, data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot run perf script")
	}
	if err := cmd.Start(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "cannot run perf script")
	}
	p, convErr := ConvertPerfScript(stdout, r.paths())
	if convErr != nil {
		_, _ = io.Copy(io.Discard, stdout)
	}
	if err := cmd.Wait(); err != nil {
		return nil, errs.Wrap(errs.Failure, err, "perf script failed: %s", firstLine(stderr.Bytes()))
	}
	return p, convErr
}

// ingest runs the workload, which writes its own pprof profile to
// [targets.X.profile] output, and reads that file.
func (r *runner) ingest(ctx context.Context, e *Entry) (*profile.Profile, error) {
	vars := map[string]string{}
	for _, kv := range r.co.Env(r.t, r.out) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	path := os.Expand(r.t.Profile.Output, func(k string) string { return vars[k] })
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.co.TargetDir(r.t), path)
	}
	// HONE_OUT may be the shared build cache: a file left by an earlier run
	// must not pass for this run's profile.
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, errs.Wrap(errs.Failure, err, "cannot remove the previous %s", path)
	}
	res, err := r.run(ctx, "profile workload", r.command)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
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
	out := filepath.Join(r.tmp, "stat.csv")
	if _, err := r.run(ctx, "profile workload", perf.statCommand(out, r.command)); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, errs.Wrap(errs.Failure, err, "perf stat wrote no output")
	}
	return parseStat(b), nil
}

// commandFailed is the one-line error for a build or workload that did not
// exit 0: the command, how it ended, and the end of its stderr.
func commandFailed(what, command string, t *workspace.Target, res *sandbox.Result) error {
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

// mainBinary names the mapped file with the most leaf samples that lies in
// the checkout (as a path relative to it) or the build output (as
// "$HONE_OUT/..."), and hashes it. A profile whose hottest code is outside
// both (an interpreter, a system library) names none.
func mainBinary(p *profile.Profile, root, out string) (string, string) {
	for _, m := range p.Mapping {
		name := ""
		if rel := relTo(out, m.File); rel != m.File {
			name = "$HONE_OUT/" + rel
		} else if rel := relTo(root, m.File); rel != m.File {
			name = rel
		} else {
			continue
		}
		b, err := os.ReadFile(m.File)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		return name, hex.EncodeToString(sum[:])
	}
	return "", ""
}
