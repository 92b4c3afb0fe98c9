/* Two variants of one program for the profile tests: "a" does the common
 * work, "b" does it and as much again in extra_work_b. Each function does
 * its own work (no shared leaf), so its self time is its cost. */
#include <stdlib.h>
#include <string.h>

volatile unsigned long sink;

__attribute__((noinline)) void common_work(unsigned long n)
{
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i * i ^ (x >> 3);
    sink = x;
}

__attribute__((noinline)) void extra_work_b(unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x += i * i ^ (x >> 3);
    sink = x;
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 2 ? strtoul(argv[2], 0, 10) : 30000000UL;
    common_work(n);
    if (argc > 1 && strcmp(argv[1], "b") == 0)
        extra_work_b(n);
    return 0;
}
