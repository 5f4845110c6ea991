#include <stdio.h>
#include <stdlib.h>

/* mix is inlined into spin and does nearly all of its work, all on one line. */
static inline __attribute__((always_inline)) unsigned long mix(unsigned long s, unsigned long i) {
	unsigned long x = i * i ^ (s >> 3); x = x * 0x9E3779B97F4A7C15ul ^ (x >> 29); x = x * 0xBF58476D1CE4E5B9ul ^ (x >> 31); x = x * 0x94D049BB133111EBul ^ (x >> 32); return x; /* mix's line */
}

__attribute__((noinline)) unsigned long spin(unsigned long n) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) s += mix(s, i); /* the call */
	return s;
}

int main(int argc, char **argv) {
	printf("%lu\n", spin(strtoul(argv[1], 0, 10)));
	return 0;
}
