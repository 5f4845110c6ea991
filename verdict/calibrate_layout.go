package verdict

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/jail"
	"github.com/hone-perf/hone/workspace"
)

// LayoutShift is the pad a layout-shift calibration session's candidate
// adds to every layout: the 16 bytes that moved the sample target's hot
// code and its time by 12-27%.
const LayoutShift = 16

// layoutSessions runs calibration sessions whose candidate is the pin
// itself, linked LayoutShift bytes further on in every layout: it differs
// from the baseline only in where its code lands, as a candidate that adds
// padding, an unused function or a moved call does, and a protocol that
// samples layouts must find no change ("faster" is a false accept,
// "slower" a false regression). base is the pin's plain build, spin makes
// a side's session command. It returns nil when the target is one layout.
func layoutSessions(ctx context.Context, run *build.Run, m measurer, proto workspace.BenchConfig, pin string, seed int64, sessions int,
	base *build.Side, spin func(*build.Side) jail.Spec, env *Environment, progress func(Progress)) (*SessionStats, error) {
	if proto.Layouts <= 1 {
		return nil, nil
	}
	layouts, _, err := run.LayoutsFor(pin, layoutSeed(pin, seed), proto.Layouts)
	// A Go target's layouts are function orders, which no pad shifts.
	if err != nil || layouts == nil || layouts[1].Order != 0 {
		return nil, err
	}
	var specs [2][]jail.Spec
	var results []LayoutResult
	for _, l := range layouts {
		results = append(results, LayoutResult{Layout: l})
		shifted := l
		shifted.Pad += LayoutShift
		for i, side := range []struct {
			role build.Role
			l    build.Layout
		}{{build.Baseline, l}, {build.Candidate, shifted}} {
			s := base
			if side.l.Pad > 0 {
				if s, err = run.BuildLayout(ctx, side.role, pin, side.l); err != nil {
					return nil, err
				}
			}
			if !s.OK() {
				return nil, errs.Failuref("the pin fails to build in layout %d (%d bytes of padding): %s; fix the build before calibrating", side.l.Index, side.l.Pad, s.Describe())
			}
			env.noteJail(s.Result)
			specs[i] = append(specs[i], spin(s))
		}
	}
	turn, err := benchTurn(ctx, progress)
	if err != nil {
		return nil, err
	}
	defer turn.Release()
	stats := &SessionStats{}
	for i := range sessions {
		p := proto
		p.OrderSeed = proto.OrderSeed + int64(i)*7919
		ls := &layoutSet{specs: specs, rng: rand.New(rand.NewPCG(uint64(p.OrderSeed), 0x7061697273))}
		br := &benchRun{baseline: specs[0][0], candidate: specs[1][0], protocol: p, meter: m, env: env}
		br.sampleLayouts(ls)
		if progress != nil {
			br.progress = func(pr Progress) { pr.Session, pr.Sessions = i+1, sessions; progress(pr) }
		}
		b, err := session(ctx, br)
		if err != nil {
			return nil, err
		}
		// Judged as a verdict's layouts are: slower in one layout only
		// is no false regression.
		b.Layout = &LayoutReport{Layouts: slices.Clone(results)}
		layoutFigures(b)
		stats.add(b)
	}
	stats.finish()
	return stats, nil
}

// describeShift is the layout-shift sessions' part of a calibration summary.
func (s *SessionStats) describeShift() string {
	return fmt.Sprintf("%d-byte layout shift: %d/%d accepted, %d/%d slower", LayoutShift, s.Accepts, s.Sessions, s.Detected, s.Sessions)
}
