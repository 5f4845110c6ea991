package git

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Change is one path git reports as different between two trees.
type Change struct {
	Path    string `json:"path"`
	OldMode uint32 `json:"old_mode"`
	NewMode uint32 `json:"new_mode"`
	Status  string `json:"status"` // git's letter: A, D, M, T
	Binary  bool   `json:"binary,omitempty"`
	Hash    string `json:"-"` // the new object
}

// MarshalJSON writes the modes as git writes them, octal strings such as
// "100644" ("000000" for a side that does not exist), not as the decimal
// numbers nobody reads modes in.
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	return json.Marshal(struct {
		plain
		OldMode string `json:"old_mode"`
		NewMode string `json:"new_mode"`
	}{plain(c), fmt.Sprintf("%06o", c.OldMode), fmt.Sprintf("%06o", c.NewMode)})
}

// TreeChanges lists what differs between two commits or trees, as git's
// own diff-tree reports it (see RawDiffArgs and ParseRaw).
func TreeChanges(ctx context.Context, dir, from, to string) ([]Change, error) {
	out, err := Run(ctx, Cmd{Dir: dir, Isolated: true, Args: append(append([]string{"diff-tree"}, RawDiffArgs...), "--no-commit-id", from, to)})
	if err != nil {
		return nil, fmt.Errorf("cannot list the changes from %s to %s: %w", Short(from), Short(to), err)
	}
	changes, err := ParseRaw(out)
	if err != nil {
		return nil, fmt.Errorf("cannot read git's list of changes: %w", err)
	}
	return changes, nil
}

// RawDiffArgs are the options of a diff-tree, diff-index or diff-files that
// ParseRaw reads: every path on its own, NUL-separated, with modes and the
// binary marker, and no rename detection so both sides of a move are seen.
var RawDiffArgs = []string{"-r", "-z", "--raw", "--numstat", "--no-renames"}

// ParseRaw reads `git diff-* -z --raw --numstat` output (see RawDiffArgs):
// raw records give paths and modes, numstat records mark binary content
// ("-" counts).
func ParseRaw(out []byte) ([]Change, error) {
	var changes []Change
	byPath := map[string]int{}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		if !strings.HasPrefix(f, ":") {
			stat := strings.SplitN(f, "\t", 3)
			if len(stat) == 3 && stat[0] == "-" {
				if j, ok := byPath[stat[2]]; ok {
					changes[j].Binary = true
				}
			}
			continue
		}
		meta := strings.Fields(f[1:])
		if len(meta) < 5 || i+1 >= len(fields) || fields[i+1] == "" {
			return nil, fmt.Errorf("unexpected git diff output %q", f)
		}
		om, err1 := strconv.ParseUint(meta[0], 8, 32)
		nm, err2 := strconv.ParseUint(meta[1], 8, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("unexpected modes in git diff output %q", f)
		}
		i++
		byPath[fields[i]] = len(changes)
		changes = append(changes, Change{Path: fields[i], OldMode: uint32(om), NewMode: uint32(nm), Status: meta[4][:1], Hash: meta[3]})
	}
	return changes, nil
}
