/* A minimal C parent for I/O counts: runs PROGRAM once with posix_spawn,
 * its output to /dev/null as cmdscope's, reads /proc/<pid>/io while the
 * child is a zombie (waitid with WNOWAIT),
 * reaps it and prints the file's rchar, wchar, read_bytes and write_bytes
 * on one line. The reference cmdscope's I/O readings are tested against.
 *
 *   procio PROGRAM [ARGS...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long long field(const char *text, const char *key) {
    const char *at = strstr(text, key);
    return at ? atoll(at + strlen(key)) : -1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: procio PROGRAM [ARGS...]\n");
        return 2;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    if (posix_spawn(&pid, argv[1], &fa, NULL, argv + 1, environ) != 0) return 1;
    siginfo_t info;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0) return 1;
    char path[32], text[512];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    int fd = open(path, O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (n <= 0) return 1;
    text[n] = 0;
    int status;
    if (waitpid(pid, &status, 0) != pid) return 1;
    printf("%lld %lld %lld %lld\n", field(text, "rchar: "), field(text, "wchar: "),
           field(text, "\nread_bytes: "), field(text, "\nwrite_bytes: "));
    return 0;
}
