package repo_test

import (
	"context"
	"testing"

	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/repo/repotest"
	"github.com/hone-perf/hone/internal/testgit"
)

// The repository's own Store, as testgit hands it to every package's
// tests, passes the conformance suite.
func TestStoreConformance(t *testing.T) {
	repotest.Run(t, func(t *testing.T) repo.Store {
		testgit.Setenv(t)
		_, s := testgit.NewStore(t, nil)
		return s
	})
}

var ctx = context.Background()
