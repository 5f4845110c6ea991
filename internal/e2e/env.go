package e2e

import (
	"os"

	"github.com/hone-perf/hone/internal/tier"
)

// Env is the environment an end-to-end test runs git and hone in: its own
// home and temporary folder, fixed authors, no system git config, and the
// tier passed through (without it, a test build of hone measures by
// declared work).
func Env(home, tmp string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + tmp, "LANG=C", "NO_COLOR=1",
		"GIT_AUTHOR_NAME=hone test", "GIT_AUTHOR_EMAIL=test@hone.invalid",
		"GIT_COMMITTER_NAME=hone test", "GIT_COMMITTER_EMAIL=test@hone.invalid",
		"GIT_CONFIG_NOSYSTEM=1", tier.Env + "=" + os.Getenv(tier.Env),
	}
}
