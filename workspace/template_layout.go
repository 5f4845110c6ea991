package workspace

import (
	"fmt"
	"strings"

	"github.com/hone-perf/hone/workspace/layout"
)

var systemNames = map[string]string{
	layout.Make: "make", layout.CMake: "CMake", layout.Cargo: "Cargo",
	layout.Go: "Go modules", layout.Meson: "Meson",
}

var sanitizerNames = map[string]string{"address": "AddressSanitizer", "undefined": "UBSan", "thread": "the race detector"}

// writeLayout writes the [sandbox] table and the target that l describes.
func writeLayout(b *strings.Builder, name, pin string, l *layout.Layout, outputs *reviewedOutputs) {
	if len(l.ReadOnly) > 0 {
		b.WriteString("# The toolchain lives outside the system directories: the jail must be\n# able to read it.\n[sandbox]\n")
		fmt.Fprintf(b, "read_only = %s\n\n", tomlList(l.ReadOnly))
	} else {
		b.WriteString(sandboxExample)
	}
	fmt.Fprintf(b, "# Found by hone init: %s (%s).\n", systemNames[l.System], l.BuildFile)
	comment(b, "", l.Notes)
	fmt.Fprintf(b, "[targets.%s]\n", name)
	fmt.Fprintf(b, "path    = %s      # the allowlist root: patches may only touch files below it\n", tomlString(l.Path))
	fmt.Fprintf(b, "pin     = %s      # branch, tag or commit the target is optimized from\n", tomlString(pin))
	comment(b, "", []string{
		"Never patchable (patterns relative to path): tests, their data, benchmark",
		"harnesses and inputs, and the files that say how to build and test. A patch",
		"that could change them could pass a gate or cheapen the bench without",
		"making the code faster.",
	})
	fmt.Fprintf(b, "protect = %s\n", tomlList(l.Protect))
	if len(l.Files) > 0 {
		b.WriteString("# Only these may change, new files included (globs relative to path).\n")
		fmt.Fprintf(b, "files   = %s\n", tomlList(l.Files))
	} else {
		b.WriteString("# files = [\"*.c\", \"*.h\"]  # optional: only these may change (globs relative to path)\n")
	}
	comment(b, "", l.Build.Why)
	fmt.Fprintf(b, "build = %s\n", tomlString(l.Build.Run))

	var unit, golden *layout.Gate
	for _, g := range l.Gates {
		b.WriteString("\n")
		comment(b, "  ", g.Why)
		fmt.Fprintf(b, "  [[targets.%s.gates]]\n  name = %s\n  run  = %s\n", name, tomlString(g.Name), tomlString(g.Run))
		if g.Equivalence {
			b.WriteString("  equivalence = true\n")
			golden = g
		} else if unit == nil {
			unit = g
		}
	}
	if golden == nil {
		b.WriteString("\n")
		commented(b, []string{
			"FILL IN: an equivalence gate. Nothing was found to run; write a command",
			"whose output shows the result of the work, on an input made from {seed},",
			"and uncomment:",
		}, fmt.Sprintf("[[targets.%s.gates]]\nname        = \"golden\"\nrun         = \"$HONE_OUT/prog --seed {seed}\"\nequivalence = true", name))
	}
	if unit != nil && len(l.Sanitize) > 0 {
		var names []string
		for _, s := range l.Sanitize {
			names = append(names, sanitizerNames[s])
		}
		b.WriteString("\n")
		commented(b, []string{
			"A sanitizer gate: the same tests, against a build with " + strings.Join(names, " and ") + ".",
			"It catches memory errors, undefined behaviour or data races that tests miss.",
			"Uncomment once the pin passes it: a report the pin itself gives makes",
			"every verdict an error.",
		}, fmt.Sprintf("[[targets.%s.gates]]\nname     = %s\nrun      = %s\nsanitize = %s", name, tomlString(unit.Name+"-sanitized"), tomlString(unit.Run), tomlList(l.Sanitize)))
	}
	if golden != nil {
		b.WriteString("\n")
		commented(b, []string{
			"A differential gate: `generate` prints one input made from $HONE_SEED,",
			"`run` reads it on stdin, for each of `seeds` seeds; every output must",
			"equal the baseline's. FILL IN the generator, then uncomment.",
		}, fmt.Sprintf("[[targets.%s.gates]]\nname     = \"differential\"\ngenerate = \"FILL IN: a command that prints one input made from $HONE_SEED\"\nseeds    = 1000\nrun      = %s", name, tomlString(strings.TrimSuffix(golden.Run, " {seed}"))))
	}

	b.WriteString("\n")
	if l.Bench == nil {
		commented(b, []string{
			"FILL IN: the bench, the workload hone measures. Nothing was found to run;",
			"write a command that does a fixed amount of work on an input made from",
			"{seed}, and uncomment:",
		}, fmt.Sprintf("[targets.%s.bench]\nrun = \"$HONE_OUT/prog --seed {seed}\"", name))
		return
	}
	comment(b, "  ", l.Bench.Why)
	fmt.Fprintf(b, "  [targets.%s.bench]\n", name)
	if l.Bench.Format != "" {
		comment(b, "  ", []string{
			"Each benchmark runs in a harness process of its own; hone's meter decides",
			"on that process's CPU time per iteration (the harness's ns/op is wall time,",
			"reported but never deciding). List the benchmarks that decide in",
			"benchmarks = [...] (all by default).",
		})
		fmt.Fprintf(b, "  format = %q\n", l.Bench.Format)
	}
	if outputs != nil {
		comment(b, "  ", outputs.why)
		fmt.Fprintf(b, "  outputs = %s\n", tomlList(outputs.names))
	}
	fmt.Fprintf(b, "  run = %s\n", tomlString(l.Bench.Run))
}

// comment writes each line as a comment, indented.
func comment(b *strings.Builder, indent string, lines []string) {
	for _, l := range lines {
		b.WriteString(indent + "# " + l + "\n")
	}
}

// commented writes an explanation and then a TOML snippet, both commented
// out and indented like the gates.
func commented(b *strings.Builder, why []string, snippet string) {
	comment(b, "  ", why)
	for _, l := range strings.Split(snippet, "\n") {
		b.WriteString("  # " + l + "\n")
	}
}

// tomlString writes s as a TOML string: a multi-line literal string for a
// script of several lines (shell text keeps its backslashes), else a basic
// string with TOML's escapes.
func tomlString(s string) string {
	if strings.Contains(s, "\n") && !strings.Contains(s, "'''") && !strings.ContainsAny(s, "\r\x00\x7f") {
		return "'''\n" + s + "'''"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
