package build

import (
	"context"
	"strings"
	"testing"

	"github.com/hone-perf/hone/internal/tier"
	"github.com/hone-perf/hone/sanitize"
)

// A use after free that a plain build runs through: the build command,
// which names cc and passes its own flags, is left as written.
const uafTarget = `[targets.t]
build = "cc -O2 -o $HONE_OUT/prog prog.c"
`

var uafFiles = map[string]string{"targets/t/prog.c": `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *keep;
static void suffix_object(char *p) { keep = p; }
int main(void) {
	char *p = malloc(16);
	strcpy(p, "ok");
	suffix_object(p);
	free(p);
	printf("%c\n", keep[0] ? 'y' : 'n');
	return 0;
}
`}

// The sanitizer build of the pin is cached apart from the plain one: a
// second run reuses each, and neither is taken for the other.
func TestSanitizerBuildRunsItsGatesWithTheSanitizerAndIsCachedApart(t *testing.T) {
	tier.Jail(t)
	t.Parallel()
	f := newFixture(t, uafFiles, uafTarget)
	r := f.start(false)
	plain := f.build(r, Baseline, f.pin)
	asan, err := r.BuildSanitized(context.Background(), Baseline, f.pin, []string{sanitize.Undefined, sanitize.Address})
	if err != nil {
		t.Fatal(err)
	}
	if !plain.OK() || !asan.OK() || plain.Cached || asan.Cached {
		t.Fatalf("builds: plain %s cached %v, asan %s cached %v", plain.Describe(), plain.Cached, asan.Describe(), asan.Cached)
	}
	if _, res := run(t, plain, "$HONE_OUT/prog"); !res.Success() {
		t.Errorf("the plain build fails: %s", res.Describe())
	}
	_, res := run(t, asan, "$HONE_OUT/prog")
	found := sanitize.Report(append(res.Stderr.Bytes(), res.Stderr.Tail(8<<10)...))
	if res.Success() || found == nil || found.Kind != "heap-use-after-free" || found.Function != "main" {
		t.Fatalf("the sanitizer build: %s, finding %v\n%s", res.Describe(), found, res.Stderr.Bytes())
	}
	if env := strings.Join(asan.Env(), " "); !strings.Contains(env, "ASAN_OPTIONS=") || strings.Contains(strings.Join(plain.Env(), " "), "ASAN_OPTIONS") {
		t.Errorf("environments: sanitizer side %q, plain side %q", env, plain.Env())
	}

	r2 := f.start(false)
	again, err := r2.BuildSanitized(context.Background(), Baseline, f.pin, []string{sanitize.Address, sanitize.Undefined})
	if err != nil {
		t.Fatal(err)
	}
	plain2 := f.build(r2, Baseline, f.pin)
	if !again.Cached || !plain2.Cached {
		t.Fatalf("second run: sanitizer build cached %v, plain cached %v", again.Cached, plain2.Cached)
	}
	if _, res := run(t, plain2, "$HONE_OUT/prog"); !res.Success() {
		t.Errorf("the cached plain build is the sanitizer one: %s", res.Describe())
	}
	if _, res := run(t, again, "$HONE_OUT/prog"); res.Success() {
		t.Errorf("the cached sanitizer build runs clean: it is the plain one")
	}
}
