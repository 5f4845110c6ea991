package jail

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

// meterFrom runs a jail in isolation iso and prints the executable its
// roles start from and, in the full jail, the size of the file its meter
// ran from, as the jailed command saw it.
func meterFrom(iso string) int {
	r, err := roleExecutable()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	// Only the full jail has its own filesystem to show the meter's file
	// in; a weak one shows the host's.
	cmd := "echo -"
	if iso == "full" {
		cmd = "stat -c %s " + meterDir + "/" + meterName
	}
	res, err := Run(context.Background(), Spec{Command: cmd, Isolation: iso})
	if err != nil || !res.Success() {
		fmt.Println(err, res.Stderr.Tail(500))
		return 1
	}
	fmt.Printf("%s %s", r.start, res.Stdout.Bytes())
	return 0
}

// install puts a copy of this test binary, as hone, in a fresh folder
// anyone may search, with helper (when not nil) beside it.
func install(t *testing.T, helper func(dir string)) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	install0755(t, self, filepath.Join(dir, "hone"))
	if helper != nil {
		helper(dir)
	}
	return filepath.Join(dir, "hone")
}

func install0755(t *testing.T, from, to string) {
	t.Helper()
	if err := copyFile(from, to); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}

// helperDir holds the helper buildHelper built, removed by TestMain.
var helperDir string

var helperBuild struct {
	once sync.Once
	path string
	err  error
}

// buildHelper builds cmd/hone-jail-helper once per test process.
func buildHelper(t *testing.T) string {
	t.Helper()
	helperBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "hone-jail-helper-")
		helperDir = dir
		if err != nil {
			helperBuild.err = err
			return
		}
		helperBuild.path = filepath.Join(dir, HelperName)
		out, err := exec.Command("go", "build", "-o", helperBuild.path, "../../cmd/hone-jail-helper").CombinedOutput()
		if err != nil {
			helperBuild.err = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if helperBuild.err != nil {
		t.Fatal(helperBuild.err)
	}
	return helperBuild.path
}

// fakeHelper is a helper that only says an ID: enough for trustedHelper,
// which runs nothing else.
func fakeHelper(id string) func(dir string) {
	return func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, HelperName), []byte("#!/bin/sh\necho "+id+"\n"), 0o755); err != nil {
			panic(err)
		}
	}
}

// A helper is used only when hone may trust it as itself: anything
// another account could have written, or a helper of another jail (an
// older hone's, with that version's weaker defences), is passed over.
func TestTrustedHelper(t *testing.T) {
	id := ImplementationID()
	cases := []struct {
		name   string
		helper func(dir string)
		want   bool
	}{
		{"this jail's, installed like hone", fakeHelper(id), true},
		{"none", nil, false},
		{"another jail's", fakeHelper(strings.Repeat("0", len(id))), false},
		{"one that says nothing", fakeHelper(""), false},
		{"writable by its group", func(dir string) {
			fakeHelper(id)(dir)
			must(os.Chmod(filepath.Join(dir, HelperName), 0o775))
		}, false},
		{"in a folder others may write", func(dir string) {
			fakeHelper(id)(dir)
			must(os.Chmod(dir, 0o777))
		}, false},
		{"a link to this jail's", func(dir string) {
			real := filepath.Join(t.TempDir(), "real")
			must(os.Mkdir(real, 0o755))
			fakeHelper(id)(real)
			must(os.Symlink(filepath.Join(real, HelperName), filepath.Join(dir, HelperName)))
		}, false},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name   string
			helper func(dir string)
			want   bool
		}{"another account's", func(dir string) {
			fakeHelper(id)(dir)
			must(os.Chown(filepath.Join(dir, HelperName), 65534, 65534))
		}, false})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hone := install(t, c.helper)
			_, ok := trustedHelper(hone)
			if ok != c.want {
				t.Errorf("trusted %v, want %v", ok, c.want)
			}
		})
	}
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// A hone with this jail's helper beside it starts the stager (as root) and
// the meter from the helper, in both isolations, and its runs work; one
// with another jail's helper beside it runs both parts itself.
func TestJailRunsFromTheHelperBesideHone(t *testing.T) {
	tier.Jail(t)
	helper := buildHelper(t)
	helperSize := size(t, helper)
	withHelper := install(t, func(dir string) { install0755(t, helper, filepath.Join(dir, HelperName)) })
	stale := install(t, fakeHelper(strings.Repeat("1", 64)))
	for _, iso := range []string{"full", "weak"} {
		t.Run(iso, func(t *testing.T) {
			for _, c := range []struct {
				hone, start string
				size        int64
			}{
				{withHelper, filepath.Join(filepath.Dir(withHelper), HelperName), helperSize},
				{stale, "/proc/self/exe", size(t, stale)},
			} {
				cmd := exec.Command(c.hone)
				cmd.Env = append(os.Environ(), "JAILTEST_METER_FROM="+iso)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", c.hone, err, out)
				}
				want := c.start + " " + strconv.FormatInt(c.size, 10)
				if iso != "full" {
					want = c.start + " -"
				}
				if got := strings.TrimSpace(string(out)); got != want {
					t.Errorf("%s: roles start from and meter size %q; want %q", c.hone, got, want)
				}
			}
		})
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
