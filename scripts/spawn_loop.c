/* The physical limit for a process harness: posix_spawn + wait4 in a loop,
 * stdout/stderr to /dev/null, nothing else. Prints seconds per run, then
 * the CPU time (user + system) per run of the children and of what they
 * reaped: CPU time moves far less than wall time on a loaded machine. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn_loop N PROGRAM [ARGS...]\n");
        return 2;
    }
    long n = atol(argv[1]);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, devnull, 0);
    posix_spawn_file_actions_adddup2(&fa, devnull, 1);
    posix_spawn_file_actions_adddup2(&fa, devnull, 2);
    struct timespec a, b;
    double cpu = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        pid_t pid;
        if (posix_spawn(&pid, argv[2], &fa, NULL, argv + 2, environ) != 0) return 1;
        int status;
        struct rusage ru;
        wait4(pid, &status, 0, &ru);
        cpu += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f %.9f\n", ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9) / n, cpu / n);
    return 0;
}
