package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/verdict"
)

func newVerdictShowCmd(app *App) *cobra.Command {
	var gate, file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--gate NAME [--file F]] [--json]",
		Short: "Show a recorded verdict and, with --gate, a gate's full output",
		Long: `Print a verdict from the ledger: ID is a verdict's entry id, or a patch id
(its latest verdict); either may be a unique prefix of at least 4
characters.

With --gate NAME, also print that gate as the verdict ran it ("build" and
"bench" name the builds and the bench command): how each side ended, the
first line that says what failed, and every stream the verdict stored,
whole (each up to [ledger] gate_log_size, 4 MiB by default; a longer stream
keeps its start and its end, with the cut marked). Sanitizer builds' own
output is stored under the first gate that needed them
(candidate.build.stderr). For a differential gate it also prints the first
input whose outputs differed: its seed, how the outputs differ, and the
commands that reproduce it. --file F prints one stored file of the gate as
it is, bytes and all (case.input, candidate.stderr, ...).

The logs are a gzipped tar attached to the entry, readable with plain git:
git show hone/ledger:<entry path without .toml>.gates.tar.gz | tar -tz

JSON fields (--json): entry (the verdict, as hone verdict --json prints it),
files[] (empty without --gate: gate, name, cut, bytes, text: the stream as
UTF-8, invalid bytes replaced), and with --gate: gate (the gate's result).`,
		Example: `  hone verdict show 3f2a9c01
  hone verdict show 3f2a --gate unit
  hone verdict show 3f2a --gate differential --file case.input > input`,
		Annotations: exits(errs.NotFound, errs.Invalid),
		Args:        exactArgs(1),
		RunE: run(func(ctx context.Context, cmd *cobra.Command, args []string) error {
			if file != "" && gate == "" {
				return errs.Usagef("--file names a file of a gate; add --gate NAME")
			}
			ws, err := app.workspace()
			if err != nil {
				return err
			}
			sh, err := verdict.Show(ctx, ws, args[0], gate)
			if err != nil {
				return err
			}
			if file != "" {
				f, err := sh.File(file)
				if err != nil {
					return err
				}
				_, err = app.Out.Write(f.Data)
				return err
			}
			if asJSON {
				return app.printJSON(showJSON(sh))
			}
			return verdict.WriteShowText(app.Out, sh)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&gate, "gate", "", "also print the gate `NAME`, with its stored output")
	f.StringVar(&file, "file", "", "print only the stored file `F` of the gate, as it is")
	f.BoolVar(&asJSON, "json", false, "print the verdict (and the gate) as JSON")
	return cmd
}

type shownFile struct {
	Gate  string `json:"gate"`
	Name  string `json:"name"`
	Cut   bool   `json:"cut"`
	Bytes int    `json:"bytes"`
	Text  string `json:"text"`
}

func showJSON(sh *verdict.Shown) any {
	out := struct {
		Entry *verdict.Entry      `json:"entry"`
		Gate  *verdict.GateResult `json:"gate,omitempty"`
		Files []shownFile         `json:"files"`
	}{Entry: sh.Entry, Gate: sh.Gate, Files: []shownFile{}}
	for _, f := range sh.Files {
		out.Files = append(out.Files, shownFile{Gate: f.Gate, Name: f.Name, Cut: f.Cut, Bytes: len(f.Data), Text: strings.ToValidUTF8(string(f.Data), "\uFFFD")})
	}
	return out
}
