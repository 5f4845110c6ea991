// Command floor is the cheapest process that links the libraries hone is
// built on (cobra, BurntSushi/toml, go-git, go-gitdiff, pprof, the MCP SDK,
// x/perf) and does nothing: a cobra command with an empty body. The ledger
// benchmarks time it beside hone and git, so the share of a whole hone
// process that no change to hone's own code can remove is measured, not
// guessed. scripts/bench-ledger.sh builds it the way scripts/build.sh builds
// hone.
package main

import (
	"os"

	"github.com/BurntSushi/toml"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
	gogit "github.com/go-git/go-git/v5"
	"github.com/google/pprof/profile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"golang.org/x/perf/benchmath"
)

// linked keeps each library in the binary, so its package initialisation
// runs as it does in hone.
var linked = []any{toml.Primitive{}, gitdiff.File{}, gogit.ErrRepositoryNotExists, profile.Profile{}, mcp.Implementation{}, benchmath.Sample{}}

func main() {
	root := &cobra.Command{Use: "floor", SilenceUsage: true}
	root.AddCommand(&cobra.Command{Use: "noop", Run: func(*cobra.Command, []string) {}})
	if err := root.Execute(); err != nil || len(linked) == 0 {
		os.Exit(1)
	}
}
