#define ZLIKE 1
