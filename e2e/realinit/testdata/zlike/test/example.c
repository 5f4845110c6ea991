#include <stdio.h>
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len);
int main(void) {
    unsigned long c = crc32(0, (const unsigned char *)"123456789", 9);
    if (c != 0xcbf43926UL) { printf("crc32 = %08lx\n", c); return 1; }
    return 0;
}
