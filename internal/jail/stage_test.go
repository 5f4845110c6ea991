package jail

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A directory swapped for a symlink between hone opening it and the stager
// mounting it must not get the symlink's target mounted instead.
func TestSwappedMountSourceIsRefused(t *testing.T) {
	base := t.TempDir()
	checkout, elsewhere := filepath.Join(base, "checkout"), filepath.Join(base, "elsewhere")
	for _, d := range []string{checkout, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fd, err := unix.Open(checkout, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := os.Rename(checkout, checkout+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, checkout); err != nil {
		t.Fatal(err)
	}
	_, err = open(strconv.Itoa(fd), checkout)
	if err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("staging a swapped path: %v", err)
	}
	st, err := open(strconv.Itoa(fd), checkout+".moved")
	if err != nil {
		t.Fatalf("staging the real path: %v", err)
	}
	unix.Close(st.own)
}
