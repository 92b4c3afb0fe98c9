/* A minimal C parent: runs PROGRAM N times with posix_spawn + wait4 and
 * prints each run's ru_maxrss in bytes, one a line. The reference that
 * cmdscope's peak-memory readings are tested and benchmarked against.
 * No stdio before or between runs: a parent's own resident high-water mark
 * is a floor under its children's readings (see src/exec/spawner.c), so
 * the reference must stay smaller than the commands it reads. Build it
 * static where possible (cc -O2 -static).
 *
 *   maxrss N PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <string.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 3) {
        static const char usage[] = "usage: maxrss N PROGRAM [ARGS...]\n";
        if (write(2, usage, sizeof usage - 1) < 0) return 2;
        return 2;
    }
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) {
        pid_t pid;
        if (posix_spawn(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0) return 1;
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) != pid) return 1;
        char line[24];
        int at = sizeof line;
        line[--at] = '\n';
        unsigned long v = (unsigned long)ru.ru_maxrss * 1024UL;
        do line[--at] = (char)('0' + v % 10); while ((v /= 10) > 0);
        if (write(1, line + at, sizeof line - at) < 0) return 1;
    }
    return 0;
}
