package realinit

import "testing"

// A project shaped like cJSON: one .c/.h library at the top level built by
// CMake (with a Makefile beside it), a test program at the top level and
// unit tests under tests/ run by CTest, an AFL harness under fuzzing/ that
// only an option builds, and a small program that reports on a document.
// init must pick CMake, keep the library's two files patchable, and take
// the program, not the harness, for the bench.
func TestInitOnACJSONShapedProjectWorksFirstTime(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeTree(t, repo, minijson)
	w := initProject(t, repo, "cmake", "make")
	w.tomlHas(`files   = ["minijson.c", "minijson.h"]`, "$HONE_OUT/build/jsonstat {seed}", "ctest --test-dir", `"fuzzing/**"`)
	w.commitInit()
	w.hotspotIn("minijson", "minijson.c", "mj_count", "line_of")

	// Count lines while scanning instead of rescanning from the start.
	v, summary := w.judge("minijson", "mj_count", "minijson.c", minijsonCount, `int mj_count(const char *text, size_t len, struct mj_stats *out) {
    long line = 1;
    hone_work += len;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\n')
            line++;
        else if (c == '{')
            out->objects++;
        else if (c == '"') {
            out->strings++;
            while (++i < len && text[i] != '"')
                if (text[i] == '\n')
                    line++;
        } else if (c >= '0' && c <= '9' && (i == 0 || text[i - 1] < '0' || text[i - 1] > '9')) {
            out->numbers++;
            out->last_line = line;
        }
    }
    return 0;
}`)
	if v != "accepted" {
		t.Errorf("counting lines in one pass was judged %s: %s", v, summary)
	}
}

const minijsonCount = `int mj_count(const char *text, size_t len, struct mj_stats *out) {
    hone_work += len;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '{')
            out->objects++;
        else if (c == '"') {
            out->strings++;
            while (++i < len && text[i] != '"')
                ;
        } else if (c >= '0' && c <= '9' && (i == 0 || text[i - 1] < '0' || text[i - 1] > '9')) {
            out->numbers++;
            out->last_line = line_of(text, i);
        }
    }
    return 0;
}`

var minijson = map[string]string{
	"CMakeLists.txt": `cmake_minimum_required(VERSION 3.10)
project(minijson C)
option(ENABLE_FUZZING "build the AFL harness" OFF)
add_library(minijson STATIC minijson.c)
add_executable(jsonstat jsonstat.c)
target_link_libraries(jsonstat minijson)
enable_testing()
add_executable(minijson_test test.c)
target_link_libraries(minijson_test minijson)
add_test(NAME minijson_test COMMAND minijson_test)
add_subdirectory(tests)
if(ENABLE_FUZZING)
  add_subdirectory(fuzzing)
endif()
`,
	"Makefile": `CFLAGS ?= -O2 -g
all: libminijson.a jsonstat minijson_test
libminijson.a: minijson.o
	$(AR) rcs $@ minijson.o
jsonstat: jsonstat.c libminijson.a
	$(CC) $(CFLAGS) -o $@ jsonstat.c libminijson.a
minijson_test: test.c libminijson.a
	$(CC) $(CFLAGS) -o $@ test.c libminijson.a
test: minijson_test
	./minijson_test
clean:
	rm -f *.o *.a jsonstat minijson_test
.PHONY: all test clean
`,
	"minijson.h": `#ifndef MINIJSON_H
#define MINIJSON_H
#include <stddef.h>

struct mj_stats { long numbers, strings, objects, last_line; };

/* mj_count counts the numbers, strings and objects of a JSON text and the
   line its last number is on. */
int mj_count(const char *text, size_t len, struct mj_stats *out);

/* hone_work counts the characters read, which jsonstat declares. */
extern unsigned long long hone_work;
#endif
`,
	"minijson.c": `#include <string.h>
#include "minijson.h"

unsigned long long hone_work;

/* line_of is the line a position falls on, counted from the start. */
static long line_of(const char *text, size_t pos) {
    long line = 1;
    hone_work += pos;
    for (size_t i = 0; i < pos; i++)
        if (text[i] == '\n')
            line++;
    return line;
}

` + minijsonCount + "\n",
	"jsonstat.c": `#include <stdio.h>
#include <stdlib.h>
#include "minijson.h"

/* jsonstat makes a document of objects from the seed and reports on it. */
int main(int argc, char **argv) {
    unsigned long x = argc > 1 ? strtoul(argv[1], 0, 10) | 1 : 1;
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (n < 40000) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        n += snprintf(buf + n, cap - n, "{\"k%lu\": %lu, \"v\": [%lu, %lu]},\n", x % 97, x % 100000, x % 13, x % 1000);
    }
    struct mj_stats s;
    mj_count(buf, n, &s);
    /* The generator's last state too: two seeds can give documents with
       the same counts, and hone's seed check must see outputs differ. */
    printf("%ld numbers, %ld strings, %ld objects, last on line %ld, state %lu\n", s.numbers, s.strings, s.objects, s.last_line, x);
    fprintf(stderr, "hone-work: %llu\n", hone_work);
    return 0;
}
`,
	"test.c": `#include <stdio.h>
#include <string.h>
#include "minijson.h"

int main(void) {
    const char *doc = "{\"a\": 1,\n \"b\": [22, 333]}\n";
    struct mj_stats s;
    mj_count(doc, strlen(doc), &s);
    if (s.numbers != 3 || s.strings != 2 || s.objects != 1 || s.last_line != 2) {
        printf("FAIL: %ld %ld %ld %ld\n", s.numbers, s.strings, s.objects, s.last_line);
        return 1;
    }
    return 0;
}
`,
	"tests/CMakeLists.txt": `add_executable(parse_numbers parse_numbers.c)
target_include_directories(parse_numbers PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(parse_numbers minijson)
add_test(NAME parse_numbers COMMAND parse_numbers)
`,
	"tests/parse_numbers.c": `#include <stdio.h>
#include <string.h>
#include "minijson.h"

int main(void) {
    const char *doc = "[1, 2, \"3\",\n\n 45]";
    struct mj_stats s;
    mj_count(doc, strlen(doc), &s);
    if (s.numbers != 3 || s.last_line != 3) {
        printf("FAIL: %ld numbers, last on line %ld\n", s.numbers, s.last_line);
        return 1;
    }
    return 0;
}
`,
	"fuzzing/CMakeLists.txt": `add_executable(afl-main afl.c)
target_include_directories(afl-main PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(afl-main minijson)
`,
	"fuzzing/afl.c": `#include <stdio.h>
#include "minijson.h"

int main(int argc, char **argv) {
    char buf[65536];
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : stdin;
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    struct mj_stats s;
    return mj_count(buf, n, &s);
}
`,
}
