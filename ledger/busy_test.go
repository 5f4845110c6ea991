package ledger_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/ledger"
)

// A server's hook that could not check a push in time (its receive lock
// held by others' pushes) judged nothing: the writer is told busy, which
// it and a runner's release retry, not refused, which ends a runner.
func TestAPushTheServerWasTooBusyToCheckIsBusyNotRefused(t *testing.T) {
	for _, c := range []struct {
		name, says string
		want       errs.Code
	}{
		{"busy", "hone: " + ledger.ServerBusy + " for 5m0s; push again", errs.Busy},
		{"refused", "hone: refs/heads/hone/ledger: an entry was changed", errs.Policy},
		{"refused, quoting the words", "hone: refs/heads/agent/" + ledger.ServerBusy + ": outside the target", errs.Policy},
	} {
		t.Run(c.name, func(t *testing.T) {
			remote, first, _ := sharedRemote(t)
			hook := "#!/bin/sh\necho '" + c.says + "' >&2\nexit 8\n"
			if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
				t.Fatal(err)
			}
			l := openLedger(t, first)
			appendProfiles(t, l, "a", 1)
			_, err := l.Push(ctx, "origin")
			if errs.CodeOf(err) != c.want {
				t.Fatalf("push past a hook saying %q: %v (%s); want %s", c.says, err, errs.CodeOf(err).Name(), c.want.Name())
			}
		})
	}
}
