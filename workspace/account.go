package workspace

import (
	"context"
	"os"
	"strconv"
	"strings"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/internal/git"
)

// WeakEnv and WeakGitConfig are the two places where the account that runs
// verdicts allows isolation = "weak": the environment, or the user's global
// git configuration. Both belong to the machine, never to the repository,
// so no commit, pin or entry can switch the jail off.
const (
	WeakEnv       = "HONE_ALLOW_WEAK_ISOLATION"
	WeakGitConfig = "hone.allowWeakIsolation"
)

// WeakAllowed reports whether this account lets verdicts run without the
// full jail when hone.toml asks for isolation = "weak": WeakEnv set to a
// true value, or WeakGitConfig true in `git config --global` (read with
// --global only, so the repository's own config has no say).
func WeakAllowed(ctx context.Context) (bool, error) {
	if v, ok := os.LookupEnv(WeakEnv); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, errs.Usagef("%s=%q: want true or false", WeakEnv, v)
		}
		return b, nil
	}
	out, err := git.Run(ctx, git.Cmd{Dir: os.TempDir(), Args: []string{"config", "--global", "--type=bool", "--get", WeakGitConfig}})
	switch {
	case err == nil:
		return strings.TrimSpace(string(out)) == "true", nil
	case git.ExitCode(err) == 1:
		return false, nil
	}
	return false, errs.Wrap(errs.Failure, err, "cannot read %s from the global git config", WeakGitConfig)
}
