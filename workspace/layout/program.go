package layout

import "strings"

// withProgram adds the equivalence gate and the bench that run prog, the
// project's program. Both pass it the verdict's seed: hone draws a fresh
// one per verdict and gives baseline and candidate the same, so a patch
// cannot carry answers computed in advance for a fixed input.
func withProgram(l *Layout, prog string) {
	run := prog + " {seed}"
	l.Gates = append(l.Gates, &Gate{Name: "golden", Run: run, Equivalence: true, Why: []string{
		"An equivalence gate: baseline and candidate run the same command and",
		"must print the same stdout and exit with the same status, byte for byte.",
		"Give the program a representative input made from the seed.",
	}})
	l.Bench = &Bench{Run: run, Why: []string{
		"The measured workload: the same program on an input made from the seed.",
		"Every bench run's output must also equal the baseline's.",
	}}
}

// seedTodo asks the user to check the commands init wrote with a guessed
// program argument: the seed, as the program's only argument.
func seedTodo(l *Layout) {
	var runs []string
	for _, g := range l.Gates {
		if strings.Contains(g.Run, "{seed}") {
			runs = appendNew(runs, "`"+g.Run+"`")
		}
	}
	if l.Bench != nil && strings.Contains(l.Bench.Run, "{seed}") {
		runs = appendNew(runs, "`"+l.Bench.Run+"`")
	}
	if len(runs) > 0 {
		l.Todo = append(l.Todo, "check the arguments of "+strings.Join(runs, " and ")+" in hone.toml: give the program a representative input made from the seed")
	}
}

// progPath is how a command names the program prog built in dir (as
// project.fromPath gives it).
func progPath(dir, prog string) string {
	if dir == "." {
		return "./" + prog
	}
	return dir + "/" + prog
}
