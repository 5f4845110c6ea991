package jail

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

func TestRootCreatesTheJailUserOnce(t *testing.T) {
	tier.Jail(t)
	root(t)
	name := "hone-jail-t" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	first := run(t, Spec{Command: "id -u", User: name})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("the jail user was not created: %v", err)
	}
	if !first.UserCreated || strconv.Itoa(first.HostUID) != u.Uid || first.HostUID == 0 {
		t.Errorf("created %v, host uid %d, want %s", first.UserCreated, first.HostUID, u.Uid)
	}
	if got := strings.TrimSpace(string(first.Stdout.Bytes())); got != jailUID {
		t.Errorf("uid inside the jail %q, want %s", got, jailUID)
	}
	if second := run(t, Spec{Command: "id -u", User: name}); second.UserCreated || second.HostUID != first.HostUID {
		t.Errorf("second run: created %v, host uid %d", second.UserCreated, second.HostUID)
	}
}

func TestJailRunsAsANumericUser(t *testing.T) {
	tier.Jail(t)
	root(t)
	res := run(t, Spec{Command: "id -u", User: "65534"})
	if res.HostUID != 65534 {
		t.Errorf("host uid %d, want 65534", res.HostUID)
	}
}

func TestJailRefusesToRunAsRoot(t *testing.T) {
	root(t)
	for _, u := range []string{"root", "0"} {
		if _, err := Run(t.Context(), Spec{Command: "id", User: u}); err == nil {
			t.Errorf("ran the jail as %s", u)
		}
	}
}

func TestCheckSaysHowToInstallBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := probe("deny")
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || strings.Contains(err.Error(), "\n") {
		t.Errorf("without bwrap: %v", err)
	}
}
