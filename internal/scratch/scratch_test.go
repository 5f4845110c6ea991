package scratch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hone-perf/hone/internal/testproc"
)

// With SCRATCH_OWN=<parent> the test binary is a hone that makes a folder
// in parent, fills it, says its path and holds it until killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("SCRATCH_OWN"); parent != "" {
		d, err := New(context.Background(), parent, "run-")
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.WriteFile(filepath.Join(d.Path, "data"), make([]byte, 8192), 0o644)
		if os.Getenv("SCRATCH_KEEP") != "" {
			d.Keep()
		}
		fmt.Println("owned")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func owner(t *testing.T, parent string, keep bool) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SCRATCH_OWN="+parent)
	if keep {
		cmd.Env = append(cmd.Env, "SCRATCH_KEEP=1")
	}
	testproc.StartReady(t, cmd, "owned")
	return cmd
}

func folders(t *testing.T, parent string) int {
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if e.IsDir() {
			n++
		}
	}
	return n
}

// A hone killed with SIGKILL leaves its folder; the next one to make a
// folder there removes it, but never a live owner's nor a kept one.
func TestFoldersOfKilledHonesAreSwept(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "runs")
	live := owner(t, parent, false)
	dead := owner(t, parent, false)
	kept := owner(t, parent, true)
	dead.Process.Kill()
	dead.Wait()
	kept.Process.Kill()
	kept.Wait()
	if n := folders(t, parent); n != 3 {
		t.Fatalf("%d folders before the sweep, want 3", n)
	}
	d, err := New(context.Background(), parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	if n := folders(t, parent); n != 3 {
		t.Errorf("%d folders after the sweep, want 3 (the live, the kept, the new)", n)
	}
	if len(Kept(parent)) != 1 {
		t.Errorf("kept folders: %v", Kept(parent))
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	live.Process.Kill()
	live.Wait()
	freed, err := Sweep(context.Background(), parent)
	if err != nil || freed.Items != 1 || freed.Bytes < 8192 {
		t.Errorf("sweep after the last owner died: %+v, %v", freed, err)
	}
	if n := folders(t, parent); n != 1 {
		t.Errorf("%d folders left, want only the kept one", n)
	}
}

// A build may leave folders without write permission; they still go.
func TestRemoveAllEmptiesReadOnlyFolders(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	deep := filepath.Join(root, "a", "b")
	os.MkdirAll(deep, 0o755)
	os.WriteFile(filepath.Join(deep, "f"), []byte("x"), 0o444)
	os.Chmod(deep, 0o555)
	os.Chmod(filepath.Dir(deep), 0o555)
	if err := RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Errorf("tree still there: %v", err)
	}
}
