package realinit

import "testing"

// A project shaped like lz4: Makefiles only, the library in lib/, the
// command-line program in programs/ and the tests in tests/, with a top
// Makefile that hands each goal to the directory's own (`$(MAKE) -C
// programs $@`). init must make lib the target, build from the top, and
// find the program that the programs' Makefile builds for the default goal.
func TestInitOnAnLZ4ShapedProjectWorksFirstTime(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	writeTree(t, repo, lzx)
	w := initProject(t, repo, "make")
	w.tomlHas(`path    = "lib"`, "make -C $HONE_ROOT check", "$HONE_ROOT/programs/lzx {seed}")
	w.commitInit()
	w.hotspotIn("lzx", "lzx.c", "lzx_adler32")

	// Reduce modulo the prime once per 5552 bytes, as zlib's adler32 does.
	v, summary := w.judge("lzx", "lzx_adler32", "lib/lzx.c", `    hone_work += 3 * n;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }`, `    while (n) {
        size_t k = n < 5552 ? n : 5552;
        n -= k;
        hone_work += k + 2;
        while (k--) {
            a += *p++;
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }`)
	if v != "accepted" {
		t.Errorf("the deferred modulo was judged %s: %s", v, summary)
	}
}

var lzx = map[string]string{
	"Makefile": `LIBDIR  = lib
PRGDIR  = programs
TESTDIR = tests

.PHONY: default
default: lib-release lzx-release

.PHONY: lib lib-release
lib lib-release:
	$(MAKE) -C $(LIBDIR) $@

.PHONY: lzx lzx-release
lzx-release: lib-release
lzx lzx-release:
	$(MAKE) -C $(PRGDIR) $@

.PHONY: check
check: default
	$(MAKE) -C $(TESTDIR) $@
`,
	"lib/Makefile": `CFLAGS ?= -O2 -g
.PHONY: default lib lib-release
default: lib-release
lib lib-release: liblzx.a
liblzx.a: lzx.o
	$(AR) rcs $@ lzx.o
lzx.o: lzx.c lzx.h
	$(CC) $(CFLAGS) -c -o $@ lzx.c
`,
	"lib/lzx.h": `#ifndef LZX_H
#define LZX_H
#include <stddef.h>
/* lzx_adler32 is the Adler-32 checksum of n bytes. */
unsigned long lzx_adler32(const unsigned char *p, size_t n);

/* hone_work counts the additions and reductions done (a reduction, a
   division, as one), which the program declares. */
extern unsigned long long hone_work;
#endif
`,
	"lib/lzx.c": `#include "lzx.h"

unsigned long long hone_work;

unsigned long lzx_adler32(const unsigned char *p, size_t n) {
    unsigned long a = 1, b = 0;
    hone_work += 3 * n;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return b << 16 | a;
}
`,
	"programs/Makefile": `CFLAGS ?= -O2 -g
LIBDIR = ../lib
.PHONY: default lzx-release
default: lzx-release
lzx-release: lzx
lzx: lzxcli.c $(LIBDIR)/liblzx.a
	$(CC) $(CFLAGS) -I$(LIBDIR) -o $@ lzxcli.c $(LIBDIR)/liblzx.a
`,
	"programs/lzxcli.c": `#include <stdio.h>
#include <stdlib.h>
#include "lzx.h"

/* lzx checksums a block of bytes made from the seed. */
int main(int argc, char **argv) {
    unsigned long x = argc > 1 ? strtoul(argv[1], 0, 10) | 1 : 1;
    size_t n = 4 << 20;
    unsigned char *buf = malloc(n);
    for (size_t i = 0; i < n; i += 8) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        for (int k = 0; k < 8; k++)
            buf[i + k] = (x >> (8 * k)) & 0x3f;
    }
    printf("adler32 %08lx\n", lzx_adler32(buf, n));
    fprintf(stderr, "hone-work: %llu\n", hone_work);
    return 0;
}
`,
	"tests/Makefile": `.PHONY: check
check: known
	./known
known: known.c ../lib/liblzx.a
	$(CC) -I../lib -o $@ known.c ../lib/liblzx.a
`,
	"tests/known.c": `#include <stdio.h>
#include <string.h>
#include "lzx.h"

int main(void) {
    const char *s = "Wikipedia";
    unsigned long got = lzx_adler32((const unsigned char *)s, strlen(s));
    if (got != 0x11e60398UL) {
        printf("FAIL: adler32(Wikipedia) = %08lx\n", got);
        return 1;
    }
    return 0;
}
`,
}
