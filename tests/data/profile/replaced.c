/* Replaces its own file as soon as it starts (the file NEXT, prepared
 * beside it, is renamed over it), then works: its samples are of this
 * build, while the path holds another one. Built twice, with WORK naming
 * the function: the other build has a different function at the same
 * addresses, which nothing runs. */
#include <stdio.h>
#include <stdlib.h>

#ifndef WORK
#define WORK first_build_work
#endif

volatile unsigned long sink;

__attribute__((noinline)) void WORK(unsigned long n)
{
    unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i * i ^ (x >> 3);
    sink = x;
}

int main(int argc, char **argv)
{
    if (argc > 2 && rename(argv[2], argv[1]) != 0) {
        perror("rename");
        return 1;
    }
    WORK(argc > 3 ? strtoul(argv[3], 0, 10) : 30000000UL);
    return 0;
}
