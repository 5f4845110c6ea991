package reexec

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const childName = "reexec-test-child"

func init() {
	Register(childName, func() int {
		fmt.Println("child ran with", strings.Join(os.Args[1:], " "))
		return 3
	})
}

func TestMain(m *testing.M) {
	if Init() {
		return
	}
	os.Exit(m.Run())
}

// A process started under a registered name runs that program, with its
// arguments, and never the tests of the binary it is; one started under
// any other name goes on as itself.
func TestChildRunsTheRegisteredProgram(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "a", "b")
	cmd.Args[0] = childName
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || string(out) != "child ran with a b\n" {
		t.Fatalf("child: %v, output %q; want exit 3 and the program's one line", err, out)
	}
	if !Initialized() {
		t.Fatal("Initialized is false after TestMain's Init")
	}
}

func TestRegisteringANameTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a second Register of one name did not panic")
		}
	}()
	Register(childName, func() int { return 0 })
}
