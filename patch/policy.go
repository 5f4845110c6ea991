package patch

import "github.com/hone-perf/hone/internal/errs"

// refusal is the one-line policy error every check returns.
func refusal(p, rule string) error { return errs.Policyf("refused %q: %s", p, rule) }
