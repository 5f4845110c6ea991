package realinit

import "testing"

// A Meson project shaped like inih: an INI reader's .c/.h at the top level,
// a static library of them, a program that reads a file and a unit test
// registered with test(). init must configure out of the tree, take the
// program (not the test's executable) for the bench, and keep the reader's
// two files patchable.
func TestInitOnAMesonProjectWorksFirstTime(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeTree(t, repo, inistat)
	w := initProject(t, repo, "meson", "ninja")
	w.tomlHas(`files   = ["ini.c", "ini.h"]`, "meson test -C /tmp/build", "$HONE_OUT/build/inicount {seed}")
	w.commitInit()
	w.hotspotIn("inistat", "ini.c", "ini_count", "section_at")

	// Remember the section while reading instead of searching back for it.
	v, summary := w.judge("inistat", "ini_count", "ini.c", iniCount, `int ini_count(const char *text, size_t len, struct ini_stats *out) {
    size_t section = len;
    hone_work += len;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '[' && (i == 0 || text[i - 1] == '\n')) {
            out->sections++;
            section = i;
        } else if (text[i] == '=') {
            out->keys++;
            if (section != len)
                out->keyed_sections += section;
        }
    }
    return 0;
}`)
	if v != "accepted" {
		t.Errorf("remembering the section was judged %s: %s", v, summary)
	}
}

const iniCount = `int ini_count(const char *text, size_t len, struct ini_stats *out) {
    hone_work += len;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '[' && (i == 0 || text[i - 1] == '\n'))
            out->sections++;
        else if (text[i] == '=') {
            out->keys++;
            size_t s = section_at(text, i);
            if (s != len)
                out->keyed_sections += s;
        }
    }
    return 0;
}`

var inistat = map[string]string{
	"meson.build": `project('inistat', 'c', default_options: ['warning_level=1'])
inistat_lib = static_library('inistat', 'ini.c')
executable('inicount', 'inicount.c', link_with: inistat_lib)
unit = executable('unit_tests', 'tests/unit.c', link_with: inistat_lib, include_directories: include_directories('.'))
test('unit', unit)
`,
	"meson_options.txt": "option('with_cli', type: 'boolean', value: true)\n",
	"ini.h": `#ifndef INI_H
#define INI_H
#include <stddef.h>

struct ini_stats { long sections, keys; unsigned long keyed_sections; };

/* ini_count counts the sections and keys of an INI text, and sums the
   offset of each key's section (a key before any section adds nothing). */
int ini_count(const char *text, size_t len, struct ini_stats *out);

/* hone_work counts the characters read, which inicount declares. */
extern unsigned long long hone_work;
#endif
`,
	"ini.c": `#include <string.h>
#include "ini.h"

unsigned long long hone_work;

/* section_at is the offset of the section header a position falls under,
   or len when none comes before it. */
static size_t section_at(const char *text, size_t pos) {
    size_t found = (size_t)-1;
    hone_work += pos;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '[' && (i == 0 || text[i - 1] == '\n'))
            found = i;
    return found == (size_t)-1 ? strlen(text) : found;
}

` + iniCount + "\n",
	"inicount.c": `#include <stdio.h>
#include <stdlib.h>
#include "ini.h"

/* inicount makes an INI text from the seed and counts what it holds. */
int main(int argc, char **argv) {
    unsigned long x = argc > 1 ? strtoul(argv[1], 0, 10) | 1 : 1;
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (n < 40000) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        if (x % 8 == 0)
            n += snprintf(buf + n, cap - n, "[s%lu]\n", x % 1000);
        else
            n += snprintf(buf + n, cap - n, "key%lu = %lu\n", x % 97, x % 100000);
    }
    struct ini_stats s;
    ini_count(buf, n, &s);
    printf("%ld sections, %ld keys, %lu\n", s.sections, s.keys, s.keyed_sections);
    fprintf(stderr, "hone-work: %llu\n", hone_work);
    return 0;
}
`,
	"tests/unit.c": `#include <stdio.h>
#include <string.h>
#include "ini.h"

int main(void) {
    const char *doc = "a = 1\n[one]\nb = 2\nc = 3\n[two]\nd = 4\n";
    struct ini_stats s;
    ini_count(doc, strlen(doc), &s);
    if (s.sections != 2 || s.keys != 4 || s.keyed_sections != 6 + 6 + 24) {
        printf("FAIL: %ld %ld %lu\n", s.sections, s.keys, s.keyed_sections);
        return 1;
    }
    return 0;
}
`,
}
