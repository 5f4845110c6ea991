package verdict

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// Differential is what a differential gate compared, and the first input
// whose outputs differed.
type Differential struct {
	// Seed is the gate's own seed (GateResult.Setup; the verdict's input
	// seed in older entries); the inputs' seeds derive from it
	// (InputSeeds), so the same seed gives the same inputs.
	Seed     int64     `toml:"seed" json:"seed"`
	Seeds    int       `toml:"seeds" json:"seeds"`       // inputs the gate asks for
	Compared int       `toml:"compared" json:"compared"` // inputs whose outputs were compared
	Mismatch *Mismatch `toml:"mismatch,omitempty" json:"mismatch,omitempty"`
}

// Mismatch is the first input (by its number) whose stdout or exit status
// differed: a case anyone can reproduce from its seed, and whose input and
// outputs the verdict stores (case.input, case.baseline.stdout,
// case.candidate.stdout in LogsAttachment).
type Mismatch struct {
	Index         int    `toml:"index" json:"index"` // its number among the gate's inputs, from 0
	Seed          int64  `toml:"seed" json:"seed"`   // HONE_SEED for the generator
	InputBytes    int    `toml:"input_bytes" json:"input_bytes"`
	InputSHA256   string `toml:"input_sha256" json:"input_sha256"`
	BaselineExit  int    `toml:"baseline_exit" json:"baseline_exit"`
	CandidateExit int    `toml:"candidate_exit" json:"candidate_exit"`
	// Difference says how the outputs differ: the exit statuses, or the
	// first line that differs.
	Difference string `toml:"difference" json:"difference"`
	// Reproduced reports that running the stored input once more on each
	// side, outside the driver, gave differing outputs again.
	Reproduced bool `toml:"reproduced" json:"reproduced"`
}

// InputSeeds derives a differential gate's n seeds (HONE_SEED for its
// generator, each in [0, 2^31) so that any generator can read it) from
// the verdict's input seed and the gate's name.
func InputSeeds(seed int64, gate string, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		h := sha256.Sum256(fmt.Appendf(nil, "hone differential\x00%d\x00%s\x00%d", seed, gate, i))
		out[i] = int64(binary.BigEndian.Uint32(h[:4]) >> 1)
	}
	return out
}

// differential runs every input on both sides, each side's inputs in one
// jail through the driver: the baseline generates them (the pin's
// generator, which no patch can change) and runs them, then the candidate
// runs the same inputs. Outputs are compared by their hashes; the first
// input that differs is run once more on each side to keep both outputs.
func (r *gateRunner) differential(ctx context.Context, g workspace.Gate, gr *GateResult, cand *build.Side) (gateOutcome, error) {
	d := &Differential{Seed: r.setup.Seed, Seeds: g.Seeds}
	gr.Differential = d
	base, outcome, err := r.side(ctx, g, gr, build.Baseline)
	if base == nil || err != nil {
		return outcome, err
	}
	seeds := InputSeeds(r.setup.Seed, g.Name, g.Seeds)
	name := sha256.Sum256([]byte(g.Name))
	order := rand.New(rand.NewPCG(uint64(r.setup.Seed), binary.BigEndian.Uint64(name[:8]))).Perm(g.Seeds)

	bres, bout, err := r.drive(ctx, g, base, driverPlan{Run: g.Run, Generate: g.Generate, Seeds: seeds, Order: order})
	if err != nil {
		return gatesPassed, err
	}
	gr.Baseline = r.info(bres, !bres.Success(), nil)
	if msg := driveFailure(bres, bout, order); msg != "" {
		gr.Message = "the baseline " + msg
		return baselineFailed, nil
	}
	inputs := make([][]byte, g.Seeds)
	for i, o := range bout {
		inputs[i] = o.Input
	}
	cres, cout, err := r.drive(ctx, g, cand, driverPlan{Run: g.Run, Inputs: inputs, Order: order})
	if err != nil {
		return gatesPassed, err
	}
	gr.Candidate = r.info(cres, !cres.Success(), nil)
	first := -1
	for i := range g.Seeds {
		c, ok := cout[i]
		if !ok {
			continue
		}
		d.Compared++
		if b := bout[i]; first < 0 && (c.Exit != b.Exit || c.Signaled != b.Signaled || c.SHA256 != b.SHA256) {
			first = i
		}
	}
	if first < 0 {
		if msg := driveFailure(cres, cout, order); msg != "" {
			gr.Message = "the candidate " + msg
			gr.Candidate = r.info(cres, true, nil)
			return gateFailed, nil
		}
		return gatesPassed, nil
	}
	return r.mismatch(ctx, g, gr, base, cand, first, seeds[first], inputs[first], bout[first])
}

// mismatch runs the first differing input once more on each side, outside
// the driver, and stores the case. A baseline whose output changes from
// one run to the next cannot judge a patch: that is the pin's fault.
func (r *gateRunner) mismatch(ctx context.Context, g workspace.Gate, gr *GateResult, base, cand *build.Side, i int, seed int64, input []byte, first driverResult) (gateOutcome, error) {
	bres, err := r.once(ctx, g, base, input)
	if err != nil {
		return gatesPassed, err
	}
	cres, err := r.once(ctx, g, cand, input)
	if err != nil {
		return gatesPassed, err
	}
	sum := sha256.Sum256(input)
	m := &Mismatch{Index: i, Seed: seed, InputBytes: len(input), InputSHA256: hex.EncodeToString(sum[:]),
		BaselineExit: bres.ExitCode, CandidateExit: cres.ExitCode}
	gr.Differential.Mismatch = m
	for _, f := range []struct {
		name string
		data []byte
	}{{"case.input", input}, {"case.baseline.stdout", bres.Stdout.Bytes()}, {"case.candidate.stdout", cres.Stdout.Bytes()},
		{"case.baseline.stderr", bres.Stderr.Bytes()}, {"case.candidate.stderr", cres.Stderr.Bytes()}} {
		if len(f.data) > 0 || f.name == "case.input" {
			r.logs.addFile(g.Name, f.name, f.data)
		}
	}
	if bres.Stdout.SHA256() != first.SHA256 || bres.ExitCode != first.Exit || bres.Signaled != first.Signaled {
		gr.Message = fmt.Sprintf("the baseline's output for input %d (HONE_SEED=%d) changed from one run to the next; a differential gate needs a run whose output depends on its input alone", i, seed)
		return baselineFailed, nil
	}
	switch {
	case cres.ExitCode != bres.ExitCode || cres.Signaled != bres.Signaled:
		m.Difference = fmt.Sprintf("%s, the baseline's %s", cres.Describe(), bres.Describe())
	default:
		m.Difference = fmt.Sprintf("stdout differs (%d bytes vs %d)%s", cres.Stdout.Len(), bres.Stdout.Len(), firstDifference(cres.Stdout.Bytes(), bres.Stdout.Bytes()))
	}
	m.Reproduced = cres.Stdout.SHA256() != bres.Stdout.SHA256() || cres.ExitCode != bres.ExitCode || cres.Signaled != bres.Signaled
	if !m.Reproduced {
		m.Difference = "outputs differed under the driver, but not when the input ran again alone"
	}
	gr.Message = fmt.Sprintf("input %d of %d (HONE_SEED=%d): %s", i, g.Seeds, seed, m.Difference)
	return gateFailed, nil
}

// once runs the gate's command on one side with input on stdin, keeping
// all of its output up to the cap.
func (r *gateRunner) once(ctx context.Context, g workspace.Gate, s *build.Side, input []byte) (*jail.Result, error) {
	spec := s.Spec(g.Run, g.Timeout.Duration)
	spec.Stdin, spec.OutputCap = bytes.NewReader(input), r.logs.cap
	res, err := jail.Run(ctx, spec)
	r.env.noteJail(res)
	return res, err
}

// drive runs the driver with plan on one side and reads its results by
// input number. The side's log keeps the runs' stderr, each headed with
// its input's number.
func (r *gateRunner) drive(ctx context.Context, g workspace.Gate, s *build.Side, plan driverPlan) (*jail.Result, map[int]driverResult, error) {
	if err := r.makeDriver(); err != nil {
		return nil, nil, err
	}
	spec := s.Spec(driverDir+"/"+driverName, g.Timeout.Duration)
	plan.Scratch = []string{"$HOME", "$TMPDIR"}
	if spec.Isolation == workspace.IsolationWeak {
		// Weak isolation runs on the host: the driver by its own path, and
		// only HOME and TMPDIR are the run's own to empty.
		spec.Command = r.driver
	} else {
		plan.Scratch = append(plan.Scratch, "/var/tmp", "/dev/shm")
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return nil, nil, errs.Wrap(errs.Failure, err, "cannot write the differential plan")
	}
	n := 0
	for _, m := range spec.Mounts {
		if m.Mode != jail.Copy {
			continue
		}
		pristine := fmt.Sprintf("%s/pristine/%d", driverDir, n)
		spec.Mounts = append(spec.Mounts, jail.Mount{Host: m.Host, Jail: pristine, Mode: jail.ReadOnly})
		spec.Env = append(spec.Env, fmt.Sprintf("%sWORK_%d=%s", envRestore, n, m.Jail), fmt.Sprintf("%sPRISTINE_%d=%s", envRestore, n, pristine))
		n++
	}
	spec.Mounts = append(spec.Mounts, jail.Mount{Host: r.driver, Jail: driverDir + "/" + driverName, Mode: jail.ReadOnly})
	spec.Stdin = bytes.NewReader(b)
	spec.OutputCap = maxPlan
	res, err := jail.Run(ctx, spec)
	r.env.noteJail(res)
	if err != nil {
		return nil, nil, err
	}
	if res.Stderr.Len() > 0 {
		data, cut := kept(&res.Stderr, r.logs.cap)
		r.logs.files = append(r.logs.files, LogFile{Gate: g.Name, Name: string(s.Role) + ".stderr", Data: data, Cut: cut})
	}
	out := map[int]driverResult{}
	sc := bufio.NewScanner(bytes.NewReader(res.Stdout.Bytes()))
	sc.Buffer(make([]byte, 64<<10), 2*maxInput+4096)
	for sc.Scan() {
		var d driverResult
		if json.Unmarshal(sc.Bytes(), &d) != nil || d.I < 0 || d.I >= len(plan.Order) {
			continue
		}
		out[d.I] = d
	}
	return res, out, nil
}

// driveFailure says why a side's driver did not give a clean result for
// every input, or "".
func driveFailure(res *jail.Result, out map[int]driverResult, order []int) string {
	for _, i := range order {
		d, ok := out[i]
		switch {
		case ok && d.Error != "":
			return fmt.Sprintf("stopped at input %d: %s", i, d.Error)
		case !ok && abnormal(res):
			return fmt.Sprintf("%s while running input %d", res.Describe(), i)
		case !ok:
			return fmt.Sprintf("gave no result for input %d (the driver %s)", i, res.Describe())
		}
	}
	if !res.Success() {
		return "driver " + res.Describe()
	}
	return ""
}

// makeDriver links hone's executable into the run folder under the
// driver's name, for binding into the jails.
func (r *gateRunner) makeDriver() error {
	if r.driver != "" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return errs.Wrap(errs.Failure, err, "cannot find hone's own executable")
	}
	dir := filepath.Join(r.run.Dir(), "driver")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot create %s", dir)
	}
	link := filepath.Join(dir, driverName)
	if err := os.Symlink(exe, link); err != nil {
		return errs.Wrap(errs.Failure, err, "cannot link %s", link)
	}
	r.driver = link
	return nil
}
