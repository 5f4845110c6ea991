package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Kind names what an entry records.
type Kind string

const (
	KindProposal    Kind = "proposal"
	KindVerdict     Kind = "verdict"
	KindProfile     Kind = "profile"
	KindCalibration Kind = "calibration"
	// KindStarted is written by a verdict before its first run. A started
	// entry that no later verdict follows is a verdict that never finished
	// (killed, crashed): the attempt counts as cancelled (see Attempts).
	KindStarted Kind = "started"
)

// Kinds lists every kind in a stable order.
var Kinds = []Kind{KindProposal, KindVerdict, KindProfile, KindCalibration, KindStarted}

// Valid reports whether k is one of Kinds: the one check of a kind, for
// stored entries and for filters a user gives.
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// KindNames lists the kinds for a message: "proposal, verdict, ...".
func KindNames() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// SchemaVersion is written into every new entry. Readers accept any version up
// to this one; fields are only ever added.
const SchemaVersion = 1

// Verdict words, the only values Common.Verdict may hold.
const (
	VerdictAccepted         = "accepted"
	VerdictNeedsHumanReview = "needs-human-review"
	VerdictRejectedGate     = "rejected-gate"
	VerdictRejectedBench    = "rejected-bench"
	VerdictError            = "error"
	// VerdictCancelled is a verdict that was started and never finished:
	// written when an interrupted verdict can still write, and shown for a
	// started entry that nothing followed. It is the attempt's outcome.
	VerdictCancelled = "cancelled"
	// VerdictInProgress is shown, never written, for a started entry whose
	// verdict is still running.
	VerdictInProgress = "in-progress"
)

// PatchRefPrefix is where patch commits live: PatchRefPrefix + patch id.
const PatchRefPrefix = "refs/hone/patches/"

// PatchRef returns the ref that holds the commit of patch id.
func PatchRef(id string) string { return PatchRefPrefix + id }

// Common is the part of every entry the ledger itself reads: identity, and the
// attempt fields it indexes. Kind-specific packages embed it in their own entry
// structs (proposal, verdict, profile, calibration) and add their fields beside
// it; the ledger stores the whole struct as one TOML file.
type Common struct {
	Schema  int       `toml:"schema" json:"schema"`
	ID      string    `toml:"id" json:"id"`
	Kind    Kind      `toml:"kind" json:"kind"`
	Target  string    `toml:"target" json:"target"`
	Created time.Time `toml:"created" json:"created"`

	// Attempt fields. A proposal sets all of them; a verdict repeats them so
	// either entry alone says what was tried.
	PatchID    string `toml:"patch_id,omitempty" json:"patch_id,omitempty"`
	Commit     string `toml:"commit,omitempty" json:"commit,omitempty"` // the patch commit
	Pin        string `toml:"pin,omitempty" json:"pin,omitempty"`       // resolved 40-hex pin
	AttemptKey string `toml:"attempt_key,omitempty" json:"attempt_key,omitempty"`
	Hotspot    string `toml:"hotspot,omitempty" json:"hotspot,omitempty"`
	Class      int    `toml:"class,omitempty" json:"class,omitempty"`
	Hypothesis string `toml:"hypothesis,omitempty" json:"hypothesis,omitempty"`
	DiffSHA256 string `toml:"diff_sha256,omitempty" json:"diff_sha256,omitempty"` // proposals: sha256 of the canonical diff pin..commit

	// Verdict entries: one of the Verdict* words and a one-line summary that
	// also goes into the git note on the patch commit.
	Verdict string `toml:"verdict,omitempty" json:"verdict,omitempty"`
	Summary string `toml:"summary,omitempty" json:"summary,omitempty"`
	// Speedup is a verdict's deciding figure (baseline median / candidate
	// median of its metric), kept here so views list it from the index;
	// 0 when the verdict had no bench, and in verdicts from before it was
	// recorded.
	Speedup float64 `toml:"speedup,omitempty" json:"speedup,omitempty"`

	// Flags are the facts about a verdict that programs act on (see the
	// Flag* names): set by whoever records the verdict, carried by the
	// index row, shown by every view. Summary is for people; no code reads
	// a fact out of it.
	Flags []string `toml:"flags,omitempty" json:"flags,omitempty"`
	// RunnerClass is the label of the runner that judged a verdict
	// (`hone runner --class`); empty for a verdict judged in a workspace.
	RunnerClass string `toml:"runner_class,omitempty" json:"runner_class,omitempty"`
	// Repository is, on verdict and started entries, the identity
	// ([runner] repository) of the repository they were judged for.
	Repository string `toml:"repository,omitempty" json:"repository,omitempty"`
}

// Flags a verdict may carry. Names are only ever added.
const (
	// FlagWeak: the commands ran with [sandbox] isolation = "weak".
	FlagWeak = "weak-isolation"
	// FlagUnprotectedPin: the pin is not on the protected base (verdicts
	// recorded before pins had to be acceptable).
	FlagUnprotectedPin = "unprotected-pin"
	// FlagStalePin: the proposal's pin is not one the protected tip accepts.
	FlagStalePin = "stale-pin"
	// FlagProposalMismatch: the proposal entry's fields disagree with its
	// patch commit (pin, target, config blob, diff hash); nothing ran.
	FlagProposalMismatch = "proposal-mismatch"
	// FlagUnseeded: the target's outputs do not depend on the input seed.
	FlagUnseeded = "unseeded"
	// FlagWorkUnverified: a harness bench without outputs that check its work.
	FlagWorkUnverified = "work-unverified"
	// FlagOneLayout: each side was built in one code layout only.
	FlagOneLayout = "one-layout"
	// FlagLayoutSensitive: the speedup moved between layouts by about the threshold.
	FlagLayoutSensitive = "layout-sensitive"
	// FlagTestMeter: the bench was measured by the work its runs declared,
	// the meter of hone's own test builds (internal/testbuild), not by the
	// clock. Only a test build accepts such an entry.
	FlagTestMeter = "test-meter"
)

// HasFlag reports whether c carries flag.
func (c *Common) HasFlag(flag string) bool { return slices.Contains(c.Flags, flag) }

// AddFlag adds flag to c once, keeping Flags sorted so that two recorders
// of the same facts write the same bytes.
func (c *Common) AddFlag(flag string) {
	if i, found := slices.BinarySearch(c.Flags, flag); !found {
		c.Flags = slices.Insert(c.Flags, i, flag)
	}
}

// Meta gives the ledger access to the common part of any entry struct that
// embeds Common.
func (c *Common) Meta() *Common { return c }

// Record is any entry struct: one that embeds Common.
type Record interface{ Meta() *Common }

// Attachment is a blob stored beside an entry as "<id>.<Name>" (for example the
// gzipped pprof of a profile entry). Name is a plain file suffix such as "pb.gz".
type Attachment struct {
	Name string
	Data []byte
}

// NormalizeHypothesis is the form of a hypothesis used in attempt keys:
// case-folded, punctuation dropped, whitespace collapsed to single spaces.
func NormalizeHypothesis(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		case unicode.IsSpace(r):
			space = true
		default:
			// Punctuation and symbols separate words as whitespace would, so
			// "a,b" and "a b" are the same idea but "ab" is not.
			space = true
		}
	}
	return b.String()
}

// AttemptKey identifies an idea: (target, hotspot, playbook class, normalized
// hypothesis). Two proposals with the same key are the same attempt.
func AttemptKey(target, hotspot string, class int, hypothesis string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%s", target, strings.TrimSpace(hotspot), class, NormalizeHypothesis(hypothesis))
	return hex.EncodeToString(h.Sum(nil))[:32]
}
