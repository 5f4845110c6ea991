/* Reads an item after freeing it: exits 0 without AddressSanitizer. */
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
  free(a);
  return suffix_object(a) == 12345;
}
