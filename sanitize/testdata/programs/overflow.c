/* Overflows a signed int: exits 0 without UndefinedBehaviorSanitizer. */
#include <limits.h>

static int add(int a, int b) {
  return a + b;
}

int main(int argc, char **argv) {
  (void)argv;
  return add(INT_MAX, argc) == 0;
}
