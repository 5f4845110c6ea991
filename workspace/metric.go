package workspace

import "fmt"

// The metrics a bench decides on, from the most to the least deterministic.
const (
	MetricInstructions = "instructions"
	MetricCPUTime      = "cpu-time"
	MetricWall         = "wall"
)

// CheckMetric returns an error naming the metrics unless m is one. It is the
// one check of a metric name, for hone.toml and for command-line overrides.
func CheckMetric(m string) error {
	switch m {
	case MetricInstructions, MetricCPUTime, MetricWall:
		return nil
	}
	return fmt.Errorf("%q is not a metric; use instructions, cpu-time or wall", m)
}
