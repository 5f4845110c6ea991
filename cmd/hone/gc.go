package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/build"
	"github.com/hone-perf/hone/internal/errs"
)

func init() { register("gc", command(newGCCmd)) }

type gcOptions struct {
	*factory
	out output
}

func newGCCmd(f *factory, runF func(*gcOptions) error) *cobra.Command {
	opts := &gcOptions{factory: f, out: f.output()}
	cmd := &cobra.Command{
		Use:   "gc [--json]",
		Short: "Remove what killed hones left behind and trim the build cache",
		Long: `Remove the run folders and throwaway indexes of hone processes that died
(killed, crashed) before removing them, and the checkouts older hone versions
left under .git/hone/checkouts/; check every cached build against the
manifest recorded when it was built, removing those that differ; kill what
dead hones' jails left running (as root: processes of the jail user whose
parent is gone); then trim
the build cache (the pins' cached builds and the trusted Go build cache) to
[sandbox] cache_size (default 2GiB), least recently used first. A folder of a live hone, and one kept with
` + "`hone verdict --keep`" + `, is never removed; kept folders are listed. Every hone
that makes a run folder sweeps dead hones' folders already; gc also trims.

JSON fields (--json): leftovers, damaged and build_cache (items, bytes:
what was removed), cache_bytes (the cache's size now), cache_limit, kept
(paths), orphans (processes killed).`,
		Example: `  hone gc
  hone gc --json`,
		Annotations: exits(errs.Invalid, errs.Busy),
		Args:        exactArgs(0),
		RunE:        runCommand(opts, runF, nil, gcRun),
	}
	addJSONFlag(cmd, &opts.out, "print what was removed as JSON")
	return cmd
}

func gcRun(ctx context.Context, opts *gcOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	res, err := build.GC(ctx, ws.Repo, ws.Config.Sandbox.CacheBytes)
	if err != nil {
		return err
	}
	return opts.out.print(res, func(w io.Writer) error {
		fmt.Fprintf(w, "removed %d leftover folders (%s), %d damaged and %d least recently used build cache entries (%s); the cache holds %s of %s\n",
			res.Leftovers.Items, sizeText(res.Leftovers.Bytes), res.Damaged.Items, res.Cache.Items, sizeText(res.Damaged.Bytes+res.Cache.Bytes), sizeText(res.CacheBytes), sizeText(res.CacheLimit))
		if res.Orphans > 0 {
			fmt.Fprintf(w, "killed %d processes that dead hones' jails left running\n", res.Orphans)
		}
		for _, k := range res.Kept {
			fmt.Fprintf(w, "kept: %s\n", k)
		}
		return nil
	})
}

// sizeText shows a size in binary units.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
