package main

import (
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hone-perf/hone/internal/errs"
	"github.com/hone-perf/hone/verdict"
	"github.com/hone-perf/hone/workspace"
)

type verdictShowOptions struct {
	workspace func() (*workspace.Workspace, error)
	out       output

	ID   string
	Gate string
	File string
}

func newVerdictShowCmd(f *factory, runF func(*verdictShowOptions) error) *cobra.Command {
	opts := &verdictShowOptions{workspace: f.workspace, out: f.output()}
	cmd := &cobra.Command{
		Use:   "show ID [--gate NAME [--file F]] [--json]",
		Short: "Show a recorded verdict and, with --gate, a gate's full output",
		Long: `Print a verdict from the ledger: ID is a verdict's entry id, or a patch id
(its latest verdict); either may be a unique prefix of at least 4
characters.

With --gate NAME, also print that gate as the verdict ran it ("build" and
"bench" name the builds and the bench command): how each side ended, the
first line that says what failed, and every stream the verdict stored,
whole (each up to [ledger] gate_log_size, 4 MiB by default, all of them
within [ledger] verdict_log_size, 1 MiB compressed; a longer stream keeps
its start and its end, with the cut marked). Sanitizer builds' own
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
		RunE: runCommand(opts, runF, func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.File != "" && opts.Gate == "" {
				return errs.Usagef("--file names a file of a gate; add --gate NAME")
			}
			return nil
		}, verdictShowRun),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Gate, "gate", "", "also print the gate `NAME`, with its stored output")
	fl.StringVar(&opts.File, "file", "", "print only the stored file `F` of the gate, as it is")
	addJSONFlag(cmd, &opts.out, "print the verdict (and the gate) as JSON")
	return cmd
}

func verdictShowRun(ctx context.Context, opts *verdictShowOptions) error {
	ws, err := opts.workspace()
	if err != nil {
		return err
	}
	sh, err := verdict.Show(ctx, ws, opts.ID, opts.Gate)
	if err != nil {
		return err
	}
	if opts.File != "" {
		sf, err := sh.File(opts.File)
		if err != nil {
			return err
		}
		_, err = opts.out.io.Out.Write(sf.Data)
		return err
	}
	return opts.out.print(showJSON(sh), func(w io.Writer) error { return verdict.WriteShowText(w, sh) })
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
