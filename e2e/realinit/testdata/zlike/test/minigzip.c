#include <stdio.h>
#include <stdlib.h>
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len);
extern unsigned long long hone_work;
int main(int argc, char **argv) {
    unsigned long seed = argc > 1 ? strtoul(argv[1], 0, 10) : 1, n = 1 << 20;
    unsigned char *b = malloc(n);
    for (unsigned long i = 0; i < n; i++) { seed = seed * 6364136223846793005ULL + 1; b[i] = seed >> 56; }
    printf("%08lx\n", crc32(0, b, n));
    fprintf(stderr, "hone-work: %llu\n", hone_work);
    return 0;
}
