package sanitize

import (
	"os"
	"path/filepath"
	"testing"
)

// The reports in testdata/reports were captured from real runs of the
// programs in testdata/programs: GCC 12's sanitizers on Debian 12, Go's
// race detector, and Rust nightly's AddressSanitizer.
func TestReportNamesTheKindAndTheFirstFrameOfTheProgram(t *testing.T) {
	for _, c := range []struct{ file, sanitizer, kind, frame string }{
		{"asan-heap-use-after-free.txt", "AddressSanitizer", "heap-use-after-free", "suffix_object uaf.c:10"},
		// The header says "attempting double-free"; the SUMMARY names it.
		// Frame #0 is the runtime's free.
		{"asan-double-free.txt", "AddressSanitizer", "double-free", "Buffer::release(int) doublefree.cc:9"},
		{"lsan-memory-leak.txt", "LeakSanitizer", "memory-leak", "make leak.c:7"},
		{"ubsan-signed-integer-overflow.txt", "UndefinedBehaviorSanitizer", "signed-integer-overflow", "add overflow.c:5"},
		{"tsan-data-race.txt", "ThreadSanitizer", "data-race", "worker race.c:8"},
		{"go-data-race.txt", "Go race detector", "data-race", "main.bump main.go:14"},
		{"rust-heap-buffer-overflow.txt", "AddressSanitizer", "heap-buffer-overflow", "ruaf::suffix_object main.rs:4"},
	} {
		t.Run(c.file, func(t *testing.T) {
			stderr, err := os.ReadFile(filepath.Join("testdata", "reports", c.file))
			if err != nil {
				t.Fatal(err)
			}
			f := Report(stderr)
			if f == nil {
				t.Fatal("no finding")
			}
			if f.Sanitizer != c.sanitizer || f.Kind != c.kind || f.Frame() != c.frame {
				t.Errorf("got %s / %s / %q, want %s / %s / %q", f.Sanitizer, f.Kind, f.Frame(), c.sanitizer, c.kind, c.frame)
			}
			if f.Header == "" || len(f.Header) > 300 {
				t.Errorf("header = %q", f.Header)
			}
		})
	}
}

func TestReportFindsNothingInAnOrdinaryFailure(t *testing.T) {
	for _, stderr := range []string{
		"",
		"FAIL: test_parse (expected 3, got 4)\nmake: *** [check] Error 1\n",
		"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:5 +0x1d\n",
		"SUMMARY: AddressSanitizer: looks like a report but has no header\n",
	} {
		if f := Report([]byte(stderr)); f != nil {
			t.Errorf("%q: found %s", stderr, f)
		}
	}
}

// Without print_stacktrace, UBSan prints only its location line; the kind
// then comes from the message.
func TestReportReadsABareUBSanLine(t *testing.T) {
	f := Report([]byte("ok 1\njson.c:88:14: runtime error: load of null pointer of type 'int'\n"))
	if f == nil || f.Kind != "null" || f.Frame() != "json.c:88" || f.String() != "UndefinedBehaviorSanitizer: null in json.c:88" {
		t.Errorf("finding = %+v", f)
	}
}

// A report whose stacks hold nothing of the program's own (a build without
// debug information) still names its kind.
func TestReportWithoutSourceLines(t *testing.T) {
	f := Report([]byte(`==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x55 bp 0x7 sp 0x7 T0)
    #0 0x55d5c in parse (/hone/out/prog+0x11c3)
    #1 0x7f00 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58
SUMMARY: AddressSanitizer: SEGV (/hone/out/prog+0x11c3) in parse
`))
	if f == nil || f.Kind != "SEGV" || f.Frame() != "" || f.String() != "AddressSanitizer: SEGV" {
		t.Errorf("finding = %+v", f)
	}
}
