#include "zconf.h"
/* hone_work counts the steps done, which the bench program declares. */
unsigned long long hone_work;

/* A bitwise CRC-32: eight steps a byte. */
unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned long len) {
    hone_work += 8 * len;
    crc = ~crc & 0xffffffffUL;
    while (len--) {
        crc ^= *buf++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320UL : crc >> 1;
    }
    return ~crc & 0xffffffffUL;
}
#ifdef MAKECRCH
int main(void) { return 0; }
#endif
