package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// runDriver runs the differential driver's loop in this process, as the
// jail's meter would start it, and returns its results by input.
func runDriver(t *testing.T, p Plan) (map[int]Result, []int, string) {
	t.Helper()
	// The driver makes itself a subreaper that is not dumpable; this
	// process must be neither once the test is over.
	t.Cleanup(func() {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	})
	plan, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := drive(bytes.NewReader(plan), &out, &errOut); err != nil {
		t.Fatalf("drive: %v\n%s", err, errOut.String())
	}
	got := map[int]Result{}
	var order []int
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("result line %q: %v", line, err)
		}
		got[r.I] = r
		order = append(order, r.I)
	}
	return got, order, errOut.String()
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// Each input runs as if it were the first: what a run wrote in the scratch
// areas is gone, the private copy is put back (a changed file, a removed
// one, a new one), a helper it left running is killed, and its output is
// hashed whole; the generator gets each seed, the command none.
func TestDriverRunsEachInputAfresh(t *testing.T) {
	dir := t.TempDir()
	scratch, work, pristine := filepath.Join(dir, "tmp"), filepath.Join(dir, "work"), filepath.Join(dir, "pristine")
	for _, d := range []string{scratch, work, pristine} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{work, pristine} {
		os.WriteFile(filepath.Join(d, "data"), []byte("as committed\n"), 0o644)
		os.WriteFile(filepath.Join(d, "gone"), []byte("here\n"), 0o644)
	}
	t.Setenv("HONE_TEST_SCRATCH", scratch)
	t.Setenv(EnvRestore+"WORK_0", work)
	t.Setenv(EnvRestore+"PRISTINE_0", pristine)
	// The run prints its input, how many earlier runs it can see, the
	// copy's file as it finds it and whether a helper is still there,
	// then tries to leave traces of all four for the next input (the
	// helper (sleep 4242) and the pattern are spelled so that pgrep does not
	// find the script itself).
	run := `cat; ls "$HONE_TEST_SCRATCH" | wc -l; cat "` + work + `/data"; ls "` + work + `"; pgrep -f "sleep 424[2]" >/dev/null && echo helper;` +
		` touch "$HONE_TEST_SCRATCH/seen"; echo changed >> "` + work + `/data"; rm "` + work + `/gone"; touch "` + work + `/new";` +
		` (sleep 4$((242)) &); echo "$HONE_SEED" >&2`
	got, order, stderr := runDriver(t, Plan{Run: run, Generate: `echo "input $HONE_SEED"`, Seeds: []int64{11, 22, 33},
		Order: []int{2, 0, 1}, Scratch: []string{"$HONE_TEST_SCRATCH"}})
	if len(order) != 3 || order[0] != 2 || order[1] != 0 || order[2] != 1 {
		t.Fatalf("ran %v, want the plan's order [2 0 1]", order)
	}
	for i, seed := range []string{"11", "22", "33"} {
		r := got[i]
		want := "input " + seed + "\n0\nas committed\ndata\ngone\n"
		if string(r.Input) != "input "+seed+"\n" || r.Exit != 0 || r.Error != "" || r.SHA256 != sha(want) || r.Bytes != int64(len(want)) {
			t.Errorf("input %d: %+v; want the output %q", i, r, want)
		}
	}
	if strings.Contains(stderr, "11") || !strings.Contains(stderr, "--- input 2 ---") {
		t.Errorf("the command's stderr: %q", stderr)
	}
	if left := children(); len(left) != 0 {
		t.Errorf("processes left: %v", left)
	}

	// The candidate's side is given the baseline's inputs; a failing
	// command is a result, not the driver's failure.
	got, _, _ = runDriver(t, Plan{Run: `cat; exit 3`, Inputs: [][]byte{[]byte("a\n"), []byte("b\n")}, Order: []int{1, 0}})
	if got[0].SHA256 != sha("a\n") || got[1].SHA256 != sha("b\n") || got[0].Exit != 3 || got[0].Input != nil {
		t.Errorf("given inputs: %+v", got)
	}
}

// A generator that fails stops the driver at that input, saying why.
func TestDriverStopsAtAFailingGenerator(t *testing.T) {
	got, order, _ := runDriver(t, Plan{Run: "cat", Generate: `[ "$HONE_SEED" != 2 ] && echo ok`, Seeds: []int64{1, 2, 3}, Order: []int{0, 1, 2}})
	if len(order) != 2 || got[1].Error != "generate with HONE_SEED=2: exit status 1" || got[0].Error != "" {
		t.Errorf("results %v: %+v", order, got)
	}
	got, _, _ = runDriver(t, Plan{Run: "cat", Generate: `head -c 2000000 /dev/zero`, Seeds: []int64{1}, Order: []int{0}})
	if !strings.Contains(got[0].Error, "printed more than") {
		t.Errorf("an oversized input: %+v", got[0])
	}
}
