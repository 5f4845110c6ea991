package sanitize

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzReport(f *testing.F) {
	reports, _ := filepath.Glob(filepath.Join("testdata", "reports", "*.txt"))
	for _, p := range reports {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, stderr []byte) {
		fd := Report(stderr)
		if fd == nil {
			return
		}
		if fd.Sanitizer == "" || fd.Kind == "" || len(fd.Header) > 300 || (fd.Line != 0 && fd.File == "") {
			t.Fatalf("finding %+v", fd)
		}
		_ = fd.String()
	})
}
