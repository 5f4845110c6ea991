package verdict

import "testing"

// A bench command that names a build tool anywhere might compile the
// changed source at run time; one that runs what the build made does not.
func TestCompilesNamesBuildToolsAnywhere(t *testing.T) {
	for cmd, want := range map[string]bool{
		"$HONE_OUT/prog {seed}":                                 false,
		"$HONE_OUT/bench.test -test.bench=. -test.count=1":      false,
		"./programs/lz4 -b1 -e3 {seed}":                         false,
		"go test -run '^$' -bench . ./pkg":                      true,
		"cd sub && /usr/bin/gcc-12 -O2 -o /tmp/p a.c && /tmp/p": true,
		"x86_64-linux-gnu-g++ a.cc; ./a.out":                    true,
		"cargo bench --bench walk":                              true,
		"make -C $HONE_ROOT bench":                              true,
		"swift walk.swift {seed}":                               true,
		"sh bench.sh {seed}":                                    false,
	} {
		if got := compiles(cmd); got != want {
			t.Errorf("compiles(%q) = %v, want %v", cmd, got, want)
		}
	}
}
