/* A hot loop too tight for its placement not to matter: built unaligned,
 * its time moves by 10-20% as the code before it grows by 16 bytes. It
 * declares the steps it spun (hone-work on stderr), which hone's test
 * builds measure instead of the clock. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long work;

__attribute__((noinline)) static unsigned long spin(unsigned long x, long reps) {
	unsigned long h = 0;
	work += reps;
	for (long r = 0; r < reps; r++) {
		h += x;
		x = (x >> 1) ^ (-(x & 1) & 0xd800000000000000ul);
		if (h & 0x100)
			h ^= r;
	}
	return h;
}

int main(int argc, char **argv) {
	unsigned long seed = argc > 1 ? strtoul(argv[1], 0, 10) : 1;
	volatile unsigned long sink = spin(seed | 3, 30000000);
	(void)sink;
	printf("%lu\n", spin(seed | 1, 30000000));
	fprintf(stderr, "hone-work: %llu\n", work);
	return 0;
}
