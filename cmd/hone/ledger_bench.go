//go:build honebench

package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/ledger"
)

// This file exists only in binaries built with -tags honebench, for
// scripts/bench-ledger.sh: it times one append as a whole hone process. The
// shipped hone has no command that writes an arbitrary entry.
func init() { register("bench-append", newLedgerBenchCmd) }

type benchEntry struct {
	ledger.Common
	Note string `toml:"note"`
}

func newLedgerBenchCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "bench-append TARGET",
		Short:   "Append one profile entry to the ledger (benchmark builds only)",
		Long:    "Append one profile entry to the ledger, for scripts/bench-ledger.sh.",
		Example: `  hone bench-append wordfreq`,
		Hidden:  true,
		Args:    exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			_, l, err := f.ledger()
			if err != nil {
				return err
			}
			e := &benchEntry{Note: "benchmark"}
			e.Kind, e.Target = ledger.KindProfile, args[0]
			_, err = l.Append(ctx, e)
			return err
		}),
	}
}
