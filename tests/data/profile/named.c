/* A program whose functions the symbol tests look for by name once it is
 * stripped: two workers of about equal cost, called from main. */
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) void alpha_worker(unsigned long n)
{
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i * i ^ (x >> 3);
    sink = x;
}

__attribute__((noinline)) void beta_worker(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x += i * i ^ (x >> 5);
    sink = x;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 20000000UL;
    alpha_worker(n);
    beta_worker(n);
    return 0;
}
