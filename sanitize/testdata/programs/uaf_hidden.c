/* uaf.c, written by a candidate that behaves only when AddressSanitizer
   watches: the sanitizer build never reads the freed item. */
#include <stdlib.h>

struct item {
  int value;
  struct item *next;
};

static int suffix_object(struct item *a) {
  return a->value;
}

int main(void) {
  struct item *a = malloc(sizeof *a);
  a->value = 1;
#ifndef __SANITIZE_ADDRESS__
  free(a);
#endif
  return suffix_object(a) == 12345;
}
