#include <stdio.h>
#include <stdlib.h>

/* heavy and light run the same loop; heavy runs it 7 times as often as
 * light runs it 3, so a profile should give them about 70% and 30%. Each
 * loop is one line, so that line is the function's hottest. */
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
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 100000000;
	printf("%lu\n", heavy(n / 10 * 7) + light(n / 10 * 3));
	return 0;
}
