package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register("version", command(newVersionCmd)) }

type versionOptions struct {
	out output
}

func newVersionCmd(f *factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{out: f.output()}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print hone's version",
		Long:  "Print hone's version, the Go version it was built with, and the platform.",
		Example: `  hone version
  hone version --json`,
		Args: exactArgs(0),
		RunE: runCommand(opts, runF, nil, versionRun),
	}
	addJSONFlag(cmd, &opts.out, "print as JSON")
	return cmd
}

func versionRun(_ context.Context, opts *versionOptions) error {
	v := map[string]string{"version": honeVersion(), "go_version": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
	return opts.out.print(v, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "hone %s (%s, %s/%s)\n", honeVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return err
	})
}
