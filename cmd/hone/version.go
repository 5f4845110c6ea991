package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register("version", newVersionCmd) }

func newVersionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print hone's version",
		Long:  "Print hone's version, the Go version it was built with, and the platform.",
		Example: `  hone version
  hone version --json`,
		Args: exactArgs(0),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if asJSON {
				return app.printJSON(map[string]string{"version": honeVersion(), "go_version": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH})
			}
			fmt.Fprintf(app.Out, "hone %s (%s, %s/%s)\n", honeVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
