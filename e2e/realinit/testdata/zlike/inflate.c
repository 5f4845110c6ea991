/* inflate.c: a core source whose usage note shows a program:

   int main()
   {
       return 0;
   }
 */
int zlike_inflate(void) { return 0; }
