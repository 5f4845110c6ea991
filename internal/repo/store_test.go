package repo_test

import (
	"testing"

	"github.com/hone-perf/hone/internal/repo"
	"github.com/hone-perf/hone/internal/repo/repotest"
	"github.com/hone-perf/hone/internal/testgit"
)

// The repository's own Store passes the conformance suite.
func TestStoreConformance(t *testing.T) {
	repotest.Run(t, func(t *testing.T) repo.Store {
		testgit.Setenv(t)
		dir := testgit.NewRepo(t, nil)
		r, err := repo.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r.Store("hone: test")
	})
}
