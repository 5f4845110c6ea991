// Package driver is the differential gate's driver: the program hone's own
// executable becomes inside the jail, under Name, to run one side's inputs
// one after another and report each run's output hash. It lives beside the
// jail's meter, not in verdict, because it is a program of its own (see
// internal/reexec); verdict only writes its Plan and reads its Results.
package driver

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hone-perf/hone/internal/reexec"
)

// A differential gate runs all of one side's inputs in one jail, through
// a driver: hone's own executable under the name Name, bound into
// the jail and started by the jail's meter like any command. The driver
// reads its plan on stdin and writes one result line per input on stdout.
// The commands it runs never hold either stream, nor can they read its
// memory or its open files (it is not dumpable), so what hone reads is
// what the driver saw. Between inputs it kills whatever a run left
// running and empties the scratch areas, so a run remembers no more of
// the previous inputs than a process started afresh would; it runs the
// inputs in an order drawn from the verdict's seed, and gives the command
// neither the input's seed nor its number.
const Name = "hone-differential"

// Dir is the jail folder that holds the driver and the read-only
// views of the private copies it puts back.
const Dir = "/hone/driver"

func init() {
	reexec.Register(Name, func() int {
		if err := drive(os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", Name, err)
			return 1
		}
		return 0
	})
}

// Plan is what hone asks of the driver. On the baseline side it
// generates each input from its seed, on the candidate side it is given
// them.
type Plan struct {
	Run      string   `json:"run"`
	Generate string   `json:"generate,omitempty"`
	Seeds    []int64  `json:"seeds,omitempty"`
	Inputs   [][]byte `json:"inputs,omitempty"`
	// Order lists the inputs' indexes in the order to run them.
	Order []int `json:"order"`
	// Scratch lists the folders to empty between inputs, with $VAR
	// expanded from the driver's environment: the jail's own HOME, TMPDIR,
	// /var/tmp and /dev/shm, and under weak isolation only HOME and TMPDIR,
	// which are the run's own there.
	Scratch []string `json:"scratch,omitempty"`
}

// Result is one input's outcome, one JSON line each.
type Result struct {
	I        int    `json:"i"`
	Input    []byte `json:"input,omitempty"` // generated inputs only
	Exit     int    `json:"exit"`
	Signaled bool   `json:"signaled,omitempty"`
	SHA256   string `json:"sha256"`
	Bytes    int64  `json:"bytes"`
	// Error says why the driver stopped at this input: the generator
	// failed, or the scratch areas could not be emptied.
	Error string `json:"error,omitempty"`
}

// Bounds on generated inputs: each is held in memory on both sides and
// sent back through the jail's stdout. MaxPlan bounds the plan the driver
// reads, and is the output cap hone gives the jail it runs in.
const (
	MaxInput       = 1 << 20
	maxInputsTotal = 32 << 20
	MaxPlan        = 4*maxInputsTotal/3 + 16<<20
)

func drive(in io.Reader, out, errOut io.Writer) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot protect itself: %v", err)
	}
	// Orphans of a run come back to the driver, which kills them before
	// the next input.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot become a subreaper: %v", err)
	}
	var p Plan
	if err := json.NewDecoder(io.LimitReader(in, MaxPlan)).Decode(&p); err != nil {
		return fmt.Errorf("cannot read the plan: %v", err)
	}
	restores := restoresFromEnv()
	for _, r := range restores {
		if err := r.record(); err != nil {
			return fmt.Errorf("cannot read %s: %v", r.Work, err)
		}
	}
	env := childEnv()
	w := bufio.NewWriter(out)
	total := 0
	for _, i := range p.Order {
		if err := clean(p.Scratch, restores); err != nil {
			return emit(w, Result{I: i, Error: err.Error()})
		}
		var input []byte
		r := Result{I: i}
		if p.Generate != "" {
			var err error
			if input, err = generate(p.Generate, p.Seeds[i], env, errOut); err == nil && total+len(input) > maxInputsTotal {
				err = fmt.Errorf("the inputs add up to more than %d bytes", maxInputsTotal)
			}
			if err != nil {
				r.Error = fmt.Sprintf("generate with HONE_SEED=%d: %v", p.Seeds[i], err)
				return emit(w, r)
			}
			total += len(input)
			r.Input = input
		} else {
			input = p.Inputs[i]
		}
		h := sha256.New()
		n := &counter{w: h}
		ws, err := runOne(p.Run, env, input, n, &labelled{w: errOut, label: "input " + strconv.Itoa(i)})
		if err != nil {
			return fmt.Errorf("cannot run %q: %v", p.Run, err)
		}
		r.Exit, r.Signaled = ws.ExitStatus(), ws.Signaled()
		r.SHA256, r.Bytes = hex.EncodeToString(h.Sum(nil)), n.n
		if err := emit(w, r); err != nil {
			return err
		}
	}
	return w.Flush()
}

func emit(w *bufio.Writer, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	w.Write(append(b, '\n'))
	return w.Flush()
}

// The private copies to put back between inputs come in the environment,
// where weak isolation translates jail paths to the host folders that
// stand for them: HONE_DRIVER_WORK_<n> and HONE_DRIVER_PRISTINE_<n>.
const EnvRestore = "HONE_DRIVER_"

func restoresFromEnv() []*restore {
	var out []*restore
	for n := 0; ; n++ {
		work, pristine := os.Getenv(fmt.Sprintf("%sWORK_%d", EnvRestore, n)), os.Getenv(fmt.Sprintf("%sPRISTINE_%d", EnvRestore, n))
		if work == "" || pristine == "" {
			return out
		}
		out = append(out, &restore{Work: work, Pristine: pristine})
	}
}

// childEnv is the driver's environment without its own variables.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvRestore) {
			env = append(env, kv)
		}
	}
	return env
}

// runOne runs command under /bin/sh with input on its stdin, and returns
// once it has exited and whatever it left running has been killed, as the
// meter does for any command: a process that outlives the run cannot
// hold its output open, nor write into the next one's.
func runOne(command string, env []string, input []byte, stdout, stderr io.Writer) (syscall.WaitStatus, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return 0, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return 0, err
	}
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, inR, outW, errW
	err = cmd.Start()
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		return 0, err
	}
	done := make(chan struct{}, 3)
	go func() { inW.Write(input); inW.Close(); done <- struct{}{} }()
	go func() { io.Copy(stdout, outR); outR.Close(); done <- struct{}{} }()
	go func() { io.Copy(stderr, errR); errR.Close(); done <- struct{}{} }()
	cmd.Wait()
	killLeftovers()
	for range 3 {
		<-done
	}
	return cmd.ProcessState.Sys().(syscall.WaitStatus), nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// generate runs the generator for one seed and returns what it printed.
func generate(command string, seed int64, env []string, errOut io.Writer) ([]byte, error) {
	var buf bytes.Buffer
	ws, err := runOne(command, append(append([]string{}, env...), "HONE_SEED="+strconv.FormatInt(seed, 10)), nil,
		&limited{w: &buf, n: MaxInput}, &labelled{w: errOut, label: "generate HONE_SEED=" + strconv.FormatInt(seed, 10)})
	switch {
	case err != nil:
		return nil, err
	case ws.Signaled():
		return nil, fmt.Errorf("killed by signal %d", ws.Signal())
	case ws.ExitStatus() != 0:
		return nil, fmt.Errorf("exit status %d", ws.ExitStatus())
	case buf.Len() > MaxInput:
		return nil, fmt.Errorf("it printed more than %d bytes", MaxInput)
	}
	return buf.Bytes(), nil
}

// killLeftovers kills every process a run left behind, which the driver
// as subreaper inherits, and reaps until it has no child left. Killing
// again on each round catches a process forked while the last kill was
// under way.
func killLeftovers() {
	for {
		for _, pid := range children() {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		if _, err := unix.Wait4(-1, nil, unix.WALL, nil); errors.Is(err, unix.ECHILD) {
			return
		}
	}
}

// children lists the driver's descendants, zombies included.
func children() []int {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	parent := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) >= 2 {
			parent[e.Name()] = f[1]
		}
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p != "" && p != "0"; p = parent[p] {
			if p == self {
				if n, err := strconv.Atoi(pid); err == nil {
					out = append(out, n)
				}
				break
			}
		}
	}
	return out
}

// clean empties each scratch folder and puts each private copy back.
func clean(scratch []string, restores []*restore) error {
	for _, d := range scratch {
		d = filepath.Clean(os.ExpandEnv(d))
		if d == "/" || d == "." {
			continue
		}
		ents, err := os.ReadDir(d)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("cannot empty %s between inputs: %v", d, err)
		}
		for _, e := range ents {
			if err := removeAll(filepath.Join(d, e.Name())); err != nil {
				return fmt.Errorf("cannot empty %s between inputs: %v", d, err)
			}
		}
	}
	for _, r := range restores {
		if err := r.reset(); err != nil {
			return fmt.Errorf("cannot put %s back between inputs: %v", r.Work, err)
		}
	}
	return nil
}

// counter passes writes on and counts them.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// limited keeps up to n+1 bytes (one more than allowed, to tell too much
// from just enough) and swallows the rest.
type limited struct {
	w io.Writer
	n int
	k int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n + 1 - l.k; room > 0 {
		q := p[:min(room, len(p))]
		l.k += len(q)
		l.w.Write(q)
	}
	return len(p), nil
}

// labelled heads a run's stderr, in the side's log, with the input it
// came from, once, when the run writes any.
type labelled struct {
	w     io.Writer
	label string
	began bool
}

func (l *labelled) Write(p []byte) (int, error) {
	if !l.began {
		l.began = true
		fmt.Fprintf(l.w, "--- %s ---\n", l.label)
	}
	return l.w.Write(p)
}
