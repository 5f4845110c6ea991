package ledger

import (
	"context"
	"fmt"
)

// ArrivalsCache is where l keeps the arrivals it read last, for tests that
// compare the queue read from what changed with the queue read whole.
func ArrivalsCache(l *Ledger) string { return l.arrivalsPath() }

// Arrivals are the arrivals the queue reads (from the cache and what
// changed since) and the ones read from the whole history, each entry as
// "<seq> <proposer>".
func Arrivals(ctx context.Context, l *Ledger) (incremental, whole map[string]string, err error) {
	a, err := l.arrivals(ctx)
	if err != nil {
		return nil, nil, err
	}
	tip, _, err := l.refs.Read(l.branchRef())
	if err != nil {
		return nil, nil, err
	}
	b, err := l.fullArrivals(ctx, tip)
	if err != nil {
		return nil, nil, err
	}
	show := func(m map[string]arrival) map[string]string {
		out := map[string]string{}
		for id, a := range m {
			out[id] = fmt.Sprintf("%d %s", a.seq, a.proposer)
		}
		return out
	}
	return show(a), show(b), nil
}
