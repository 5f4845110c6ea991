package verdict

import (
	"bytes"
	"context"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/hone-perf/hone/ledger"
)

// A verdict the seed check sent to a person recomputes to itself from what
// the ledger stores: the finding is a field of the entry, and --recompute
// applies it after the bench's decision as the verdict did.
func TestRecomputeKeepsTheUnseededReview(t *testing.T) {
	b, fail, err := benchOf(&fakeMeter{bench: steady(0.5)}, proto()).run(context.Background())
	if err != nil || fail != nil {
		t.Fatalf("%v %+v", err, fail)
	}
	e := &Entry{Bench: b}
	e.AddFlag(ledger.FlagUnseeded)
	e.Unseeded = "the baseline printed the same for input seeds 1 and 2 (the bench)"
	judgeBench(e)
	e.reviewUnseeded()
	if e.Verdict != ledger.VerdictNeedsHumanReview || e.Reason != ReasonUnseeded {
		t.Fatalf("a twofold speedup on an unseeded target: %s (%s); want needs-human-review (unseeded)", e.Verdict, e.Reason)
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(e); err != nil {
		t.Fatal(err)
	}
	var stored Entry
	if _, err := toml.Decode(buf.String(), &stored); err != nil {
		t.Fatal(err)
	}
	if re := recompute(&stored); !sameVerdict(&stored, re) {
		t.Errorf("stored %s (%s), recomputed %s (%s)", stored.Verdict, stored.Reason, re.Verdict, re.Reason)
	}
}
