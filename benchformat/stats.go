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
// must have the same number of pairs, with positive figures. The log of a
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
		var lb, lc float64
		for _, s := range samples {
			lb += math.Log(s.Baseline[i])
			lc += math.Log(s.Candidate[i])
		}
		k := float64(len(samples))
		baseline[i], candidate[i] = math.Exp(lb/k), math.Exp(lc/k)
	}
	return baseline, candidate
}
