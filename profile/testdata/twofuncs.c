#include <stdio.h>
#include <stdlib.h>

/* heavy and light run the same loop; heavy runs it 7 times as often as
 * light runs it 3, so a profile should give them about 70% and 30%. They
 * take turns in ROUNDS rounds of a few milliseconds, so whatever slows the
 * machine while the program runs slows both alike: heavy outranks light
 * by construction, not by the machine's luck. Each loop is one line, so
 * that line is the function's hottest. */
#define ROUNDS 100

__attribute__((noinline)) unsigned long heavy(unsigned long n) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) s += i * i ^ (s >> 3); /* heavy's hot line */
	return s;
}

__attribute__((noinline)) unsigned long light(unsigned long n) {
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++) s += i * i ^ (s >> 3); /* light's hot line */
	return s;
}

int main(int argc, char **argv) {
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 100000000, m = n / ROUNDS / 10, s = 0;
	/* r & 1 keeps the calls from being hoisted out of the loop as one. */
	for (unsigned long r = 0; r < ROUNDS; r++)
		s += heavy(m * 7 + (r & 1)) + light(m * 3 + (r & 1));
	printf("%lu\n", s);
	return 0;
}
