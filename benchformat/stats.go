package benchformat

import "math"

// Samples are one benchmark's per-op figures (CPUPerOp) over a bench:
// Baseline[i] and Candidate[i] were measured in the same pair.
type Samples struct {
	Name      string
	Baseline  []float64
	Candidate []float64
}

// Geomeans returns, for each pair, the geometric mean of the baseline's
// figures over the benchmarks and that of the candidate's. Every benchmark
// must have the same number of pairs. A pair in which a figure is not
// positive (a cost too small to measure) has no geometric mean on that
// side: it is 0, which the paired statistics leave out. The log of a
// pair's ratio of geometric means is the mean of the benchmarks' log
// ratios, so the verdict's paired statistics of these two series are the
// geometric mean's speedup and CI.
func Geomeans(samples []Samples) (baseline, candidate []float64) {
	if len(samples) == 0 {
		return nil, nil
	}
	n := len(samples[0].Baseline)
	baseline, candidate = make([]float64, n), make([]float64, n)
	for i := range n {
		baseline[i], candidate[i] = geomean(samples, i, false), geomean(samples, i, true)
	}
	return baseline, candidate
}

func geomean(samples []Samples, pair int, cand bool) float64 {
	var l float64
	for _, s := range samples {
		v := s.Baseline[pair]
		if cand {
			v = s.Candidate[pair]
		}
		if !(v > 0) {
			return 0
		}
		l += math.Log(v)
	}
	return math.Exp(l / float64(len(samples)))
}
