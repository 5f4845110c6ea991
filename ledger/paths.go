package ledger

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/testbuild"
)

// validID reports whether s has the shape of an entry id: 12 hex digits of
// Unix milliseconds followed by 20 hex digits (80 bits) of randomness, unique
// without coordination between writers or clones, and sorting by id sorts by
// creation time.
func validID(s string) bool {
	return len(s) == 32 && strings.Trim(s, "0123456789abcdef") == ""
}

// Names are checked by hand rather than with regexp: compiling patterns at
// start-up is a measurable part of a short hone process.
const wordChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"

// validTarget matches [A-Za-z0-9_-]+, the target names hone.toml allows.
func validTarget(s string) bool { return s != "" && strings.Trim(s, wordChars) == "" }

// validName matches [A-Za-z0-9][A-Za-z0-9._-]*: attachment names and remote
// names that may appear in a ref.
func validName(s string) bool {
	return s != "" && s[0] != '_' && s[0] != '-' && s[0] != '.' && strings.Trim(s, wordChars+".") == ""
}

func newID(t time.Time) string {
	var r [10]byte
	if _, err := rand.Read(r[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux; a broken kernel RNG must not yield guessable ids
	}
	return fmt.Sprintf("%012x%s", uint64(t.UnixMilli())&0xffffffffffff, hex.EncodeToString(r[:]))
}

// fanout is the <hh> directory of an entry: the id's last two hex digits,
// which are random, so directories fill evenly.
func fanout(id string) string { return id[len(id)-2:] }

// entryDir is the directory holding an entry and its attachments.
func entryDir(target string, kind Kind, id string) string {
	return target + "/" + string(kind) + "/" + fanout(id)
}

// EntryPath is where the entry with these fields lives on the ledger branch.
func EntryPath(target string, kind Kind, id string) string {
	return entryDir(target, kind, id) + "/" + id + ".toml"
}

func validVerdict(v string) bool {
	switch v {
	case VerdictAccepted, VerdictNeedsHumanReview, VerdictRejectedGate, VerdictRejectedBench, VerdictError, VerdictCancelled:
		return true
	}
	return false
}

// check reports what makes c unfit to be stored, as an Invalid error.
func (c *Common) check() error {
	switch {
	case c.Schema < 1 || c.Schema > SchemaVersion:
		return errs.Invalidf("ledger entry %s: schema %d is not in 1..%d", c.ID, c.Schema, SchemaVersion)
	case !validID(c.ID):
		return errs.Invalidf("ledger entry id %q is not 32 lowercase hex digits", c.ID)
	case !c.Kind.Valid():
		return errs.Invalidf("ledger entry %s: kind %q is not one of %s", c.ID, c.Kind, KindNames())
	case !validTarget(c.Target):
		return errs.Invalidf("ledger entry %s: target %q must match [A-Za-z0-9_-]+", c.ID, c.Target)
	case c.Created.IsZero():
		return errs.Invalidf("ledger entry %s: created time is missing", c.ID)
	case c.Verdict != "" && !validVerdict(c.Verdict):
		return errs.Invalidf("ledger entry %s: verdict %q is not one of accepted, needs-human-review, rejected-gate, rejected-bench, error, cancelled", c.ID, c.Verdict)
	case c.Kind == KindVerdict && c.Verdict == "":
		return errs.Invalidf("ledger entry %s: a verdict entry needs a verdict word", c.ID)
	case c.Kind == KindVerdict && (c.PatchID == "" || !isHex40(c.Commit)):
		return errs.Invalidf("ledger entry %s: a verdict entry needs patch_id and the 40-hex patch commit", c.ID)
	case c.Kind == KindStarted && (c.PatchID == "" || !isHex40(c.Commit) || c.Verdict != ""):
		return errs.Invalidf("ledger entry %s: a started entry needs patch_id and the 40-hex patch commit, and no verdict word", c.ID)
	case c.Kind == KindProposal && c.PatchID == "":
		return errs.Invalidf("ledger entry %s: a proposal entry needs patch_id", c.ID)
	case strings.ContainsAny(c.PatchID, " \t\n/"):
		return errs.Invalidf("ledger entry %s: patch_id %q contains a space or slash", c.ID, c.PatchID)
	case c.HasFlag(FlagTestMeter) && !testbuild.WorkMeter:
		return errs.Invalidf("ledger entry %s was measured by hone's test meter (flag %s), which only hone's own test builds have; a release hone never takes it as a verdict", c.ID, FlagTestMeter)
	}
	return nil
}

func isHex40(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
