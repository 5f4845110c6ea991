package build

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/atomicfile"
	"github.com/hone-perf/hone/internal/reexec"
)

// Go keeps a build cache that later builds trust blindly: whoever can write
// it can hand the next build a poisoned package. In the jail, Go reaches
// its cache only through GOCACHEPROG, served by hone's own executable under
// the name goCacheProgName: it answers gets from the trusted cache (bound
// read-only, filled by hone from baseline builds alone) and from this run's
// own puts, and keeps puts in the run's private folder. Only a baseline
// build's puts reach hone, which checks and merges them (mergeGoCache).
const goCacheProgName = "hone-gocacheprog"

// Environment of the cache program in the jail: the trusted cache
// (read-only) and the folder this run's puts go to.
const (
	envGoCache     = "HONE_GOCACHE"
	envGoCachePuts = "HONE_GOCACHE_PUTS"
)

func init() {
	reexec.Register(goCacheProgName, func() int {
		err := serveGoCache(os.Stdin, os.Stdout, os.Getenv(envGoCache), os.Getenv(envGoCachePuts))
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", goCacheProgName, err)
			return 1
		}
		return 0
	})
}

// goRequest and goResponse are the messages of cmd/go/internal/cacheprog.
type goRequest struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type goResponse struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// A cache folder holds a/<2 hex>/<action id hex>, each one line
// "v1 <output id hex> <size> <unix nanoseconds>", and o/<2 hex>/<output id
// hex>, the output itself.
func actionPath(dir, id string) string { return filepath.Join(dir, "a", id[:2], id) }
func outputPath(dir, id string) string { return filepath.Join(dir, "o", id[:2], id) }

func serveGoCache(in io.Reader, out io.Writer, trusted, puts string) error {
	if trusted == "" || puts == "" {
		return fmt.Errorf("%s and %s must name the cache folders", envGoCache, envGoCachePuts)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	reply := func(r goResponse) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := reply(goResponse{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	for {
		var req goRequest
		if err := dec.Decode(&req); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		res := goResponse{ID: req.ID}
		switch req.Command {
		case "get":
			res = goGet(req, trusted, puts)
		case "put":
			var body []byte
			if req.BodySize > 0 {
				if err := dec.Decode(&body); err != nil {
					return err
				}
			}
			res = goPut(req, body, puts)
		case "close":
			return reply(res)
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		if err := reply(res); err != nil {
			return err
		}
	}
}

// goGet answers from this run's own puts first, then the trusted cache.
func goGet(req goRequest, trusted, puts string) goResponse {
	res := goResponse{ID: req.ID, Miss: true}
	if len(req.ActionID) != sha256.Size {
		return res
	}
	id := hex.EncodeToString(req.ActionID)
	for _, dir := range []string{puts, trusted} {
		a, ok := readAction(actionPath(dir, id))
		if !ok {
			continue
		}
		p := outputPath(dir, a.output)
		if fi, err := os.Stat(p); err != nil || fi.Size() != a.size {
			continue
		}
		out, _ := hex.DecodeString(a.output)
		t := time.Unix(0, a.time)
		return goResponse{ID: req.ID, OutputID: out, Size: a.size, Time: &t, DiskPath: p}
	}
	return res
}

func goPut(req goRequest, body []byte, puts string) goResponse {
	res := goResponse{ID: req.ID}
	sum := sha256.Sum256(body)
	if len(req.ActionID) != sha256.Size || int64(len(body)) != req.BodySize || string(sum[:]) != string(req.OutputID) {
		res.Err = "malformed put"
		return res
	}
	id, out := hex.EncodeToString(req.ActionID), hex.EncodeToString(req.OutputID)
	p := outputPath(puts, out)
	if err := writeNew(p, body); err != nil {
		res.Err = err.Error()
		return res
	}
	line := fmt.Sprintf("v1 %s %d %d\n", out, len(body), time.Now().UnixNano())
	if err := writeNew(actionPath(puts, id), []byte(line)); err != nil {
		res.Err = err.Error()
		return res
	}
	res.DiskPath = p
	return res
}

// writeNew writes a file through a temporary name, so a reader never sees
// it half-written.
func writeNew(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, b, 0o644)
}

// action is one parsed action file.
type action struct {
	output string
	size   int64
	time   int64
}

func readAction(p string) (action, bool) {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 256 {
		return action{}, false
	}
	return parseAction(b)
}

func parseAction(b []byte) (action, bool) {
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "v1" || !isHexID(f[1]) {
		return action{}, false
	}
	size, err1 := strconv.ParseInt(f[2], 10, 64)
	t, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return action{}, false
	}
	return action{output: f[1], size: size, time: t}, true
}

// isHexID reports whether s is a SHA-256 in lower-case hex.
func isHexID(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
