/* Allocates and touches MIB mebibytes, then exits: a command whose peak
 * memory is known, for scripts/bench-overhead's memory table.
 *
 *   alloc MIB
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 0) << 20;
    if (n == 0) return 0;
    char *p = malloc(n);
    if (!p) return 1;
    memset(p, 1, n);
    return p[n - 1] != 1;
}
