package sanitize

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
)

func TestEvasiveSpellings(t *testing.T) {
	for _, line := range []string{
		`__attribute__((no_sanitize("address")))`,
		`__attribute__((no_sanitize_address)) static int f(void);`,
		`[[gnu::no_sanitize_undefined]] int g();`,
		`__attribute__((no_address_safety_analysis))`,
		`#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)`,
		`#if __has_feature(address_sanitizer)`,
		`__asan_unpoison_memory_region(p, n);`,
		`__sanitizer_set_death_callback(quit);`,
		`const char *__asan_default_options(void) { return "exitcode=0"; }`,
		`__lsan_disable();`,
		`if (getenv("ASAN_OPTIONS")) return fast_path();`,
		`//go:norace`,
		`//go:build race`,
		`//go:build !race && linux`,
		`if race.Enabled {`,
		`os.Getenv("GORACE")`,
		`#[no_sanitize(address)]`,
		`#[sanitize(address = "off")]`,
		`#[cfg(sanitize = "address")]`,
		`#![no_sanitize]`,
		`if (strstr(maps, "libasan")) return cheap();`,
	} {
		if !Evasive(line) {
			t.Errorf("not flagged: %s", line)
		}
	}
	for _, line := range []string{
		`/* sanitize the input before parsing */`,
		`static int sanitize_key(const char *k);`,
		`for (size_t i = 0; i < n; i++) out[i] = in[i] ^ mask;`,
		`race := pick(a, b) // the race to the finish`,
		`#include <sanitizer.h>`,
	} {
		if Evasive(line) {
			t.Errorf("honest line flagged: %s", line)
		}
	}
}

// A candidate that behaves only when the sanitizer watches passes the
// gate: the gate alone cannot catch it, and its source must be flagged.
func TestCandidateThatBehavesOnlyUnderTheSanitizerIsFlagged(t *testing.T) {
	tier.Jail(t)
	g := newGate(t, []string{Address}, "uaf_hidden.c")
	g.build(t, "cc -o /hone/out/prog uaf_hidden.c")
	clean(t, g.run(t, "/hone/out/prog"))

	f, err := os.Open(filepath.Join("testdata", "programs", "uaf_hidden.c"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flagged []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if Evasive(sc.Text()) {
			flagged = append(flagged, strings.TrimSpace(sc.Text()))
		}
	}
	if len(flagged) != 1 || flagged[0] != "#ifndef __SANITIZE_ADDRESS__" {
		t.Errorf("flagged %q", flagged)
	}
}
