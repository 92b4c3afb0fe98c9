/* What the machine checks' reading of every process costs, in C: list
 * /proc, then open, read and close each process's schedstat (its CPU time),
 * as cmdscope does at the start and at the end of each session's window.
 * Prints "reading_us listing_us processes": medians of PASSES passes.
 *
 *   cc -O2 -o proc_reading scripts/proc_reading.c && ./proc_reading 101
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One pass; with read_files 0 only the listing. Returns seconds. */
static double pass(int read_files, int *count) {
    double t0 = now();
    DIR *d = opendir("/proc");
    if (!d) return -1;
    struct dirent *e;
    char path[300], buf[96];
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        n++;
        if (!read_files) continue;
        snprintf(path, sizeof path, "/proc/%s/schedstat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (read(fd, buf, sizeof buf) < 0) n--;
        close(fd);
    }
    closedir(d);
    *count = n;
    return now() - t0;
}

int main(int argc, char **argv) {
    int passes = argc > 1 ? atoi(argv[1]) : 101;
    if (passes < 1 || passes > 100000) return 2;
    double *r = malloc(passes * sizeof *r), *l = malloc(passes * sizeof *l);
    int n = 0;
    for (int i = 0; i < passes; i++) {
        r[i] = pass(1, &n);
        l[i] = pass(0, &n);
    }
    qsort(r, passes, sizeof *r, cmp);
    qsort(l, passes, sizeof *l, cmp);
    printf("%.1f %.1f %d\n", r[passes / 2] * 1e6, l[passes / 2] * 1e6, n);
    return 0;
}
