/*
 * cmdscope-spawner: the process every measured command is started from.
 *
 * Why a separate, tiny process: Linux folds the resident high-water mark of
 * the address space a process had before exec into its ru_maxrss. A command
 * started (vfork-style or forked) from cmdscope itself can therefore never
 * read below cmdscope's own resident size (2-3 MiB after trimming), while
 * `/bin/true` really peaks near 1 MiB. This helper is a static C program,
 * started once per session, that drops its own code pages after start-up and
 * resets its high-water mark: its resident size, the floor that remains, is
 * about 0.4 MiB (below the ~1 MiB of the smallest dynamically linked
 * command), most of it the pages of code and constants the run loop touches,
 * which the kernel maps 64 KiB at a time (fault-around). Its peak is read
 * after the runs and recorded as `memory_peak_resident_floor`.
 *
 * Measured before choosing (peak RSS of the process that execs): cmdscope
 * itself 2.3-2.8 MiB even after trimming its code pages; a dynamically
 * linked C helper about 1.1 MiB (ld.so and libc mapped); this static one
 * 0.7 MiB untrimmed, 0.4 MiB trimmed. A helper without any C library would
 * be smaller still but needs its own system-call and clone code.
 *
 * Why not glibc's posix_spawn here: it maps and unmaps a stack per call and
 * makes about 120 rt_sigaction calls in the child to reset handlers. This
 * process catches only SIGTERM (its parent's death), SIGUSR1 (a schedule
 * cut short), SIGCONT and the stop signals it can catch (a command that
 * stops its parent, see `continued`), all reset by exec, and otherwise runs with default
 * dispositions and the harness's original signal mask, so the child needs
 * no signal work (but where cmdscope was started with SIGUSR1 ignored or
 * blocked, which the child then restores):
 * clone(CLONE_VM | CLONE_VFORK) on a preallocated stack, set up descriptors
 * and attributes, exec. The child never touches the helper's memory except
 * to record why a step failed.
 *
 * Everything is measured here, next to the child, exactly as the harness did
 * before: wall time from before clone to the exit notification (waitid with
 * WNOWAIT), the I/O counters reaping the child adds to this process's
 * (the same the child's /proc/<pid>/io showed as a zombie), rusage from
 * wait4 of the child itself. Perf counters are opened by the harness on the
 * child's pid while the child waits, before exec, for a "go" message.
 *
 * Protocol, on a stream socket at descriptor 3, native byte order, each
 * message an 8-byte header {type, length} and `length` bytes:
 *   harness -> helper: PREPARE (with stdin/stdout/stderr as SCM_RIGHTS),
 *                      RUN (the header alone, its length field holding the
 *                      command's id: one read per run), RUN_ENV {id,
 *                      count, count NUL-terminated NAME=VALUE} (a run
 *                      with variables of its own, see `run_env`), GO
 *                      (read by the waiting child), SCHEDULE {flags,
 *                      count, ids} (runs made back to back, see
 *                      `schedule`), RESUME, FORK (with a new socket as
 *                      SCM_RIGHTS: see `fork_spawner`).
 *   helper -> harness: PID {pid} (counters only; after FORK, the new
 *                      spawner's pid, or minus the errno), STARTED
 *                      {seconds, nanoseconds: the run's start on
 *                      CLOCK_MONOTONIC, with a timeout only), RESULT
 *                      {struct result}, DONE (a schedule's end, its
 *                      length the runs made).
 * The helper exits when the harness shuts its end of the socket down (the
 * store writer may hold a copy of that end: see `schedule`), or when the
 * harness dies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SOCK 3

enum {
    MSG_PREPARE = 1,
    MSG_RUN = 2,
    MSG_GO = 3,
    MSG_PID = 4,
    MSG_RESULT = 5,
    MSG_SCHEDULE = 6,
    MSG_DONE = 7,
    MSG_RESUME = 8,
    MSG_STARTED = 9,
    MSG_RUN_ENV = 10,
    MSG_FORK = 11,
};

/* Flags of a SCHEDULE. */
enum { S_STOP_ON_FAILURE = 1 };

/* The most runs one SCHEDULE may hold (its ids are read onto the stack). */
#define SCHEDULE_MAX 256

enum {
    F_CWD = 1,
    F_NICE = 2,
    F_CPUS = 4,
    F_USER = 8,
    F_COUNTERS = 16,
    F_PROC_IO = 32,
    F_CGROUP = 64,
    F_STARTED = 128,
};

/* Steps that can fail in the child; mirrored in spawn/wire.rs (RunResult::fill). */
enum {
    STEP_CLONE = 1,
    STEP_REDIRECT,
    STEP_CHDIR,
    STEP_NICE,
    STEP_CPUS,
    STEP_USER,
    STEP_SYNC,
    STEP_EXEC,
    STEP_SETPGID,
    STEP_CGROUP,
};

struct header {
    uint32_t type;
    uint32_t len;
};

struct prepare_fixed {
    uint32_t id, flags;
    int32_t nice;
    uint32_t uid, gid, ngroups, cpuset_len, argc, envc, nfds;
    int32_t fd_target[3]; /* which of 0/1/2 each received descriptor becomes */
};

/* Every field 64 bits wide: the Rust side mirrors it with #[repr(C)]. */
struct result {
    int64_t pid, status, failed_step, error;
    int64_t start_sec, start_nsec, end_sec, end_nsec;
    int64_t utime_sec, utime_usec, stime_sec, stime_usec;
    int64_t maxrss_kib, minflt, majflt, nvcsw, nivcsw;
    int64_t io_ok;
    uint64_t rchar, wchar, read_bytes, write_bytes, cancelled_write_bytes;
    int64_t leftovers; /* processes the run left running, killed (batch mode) */
    int64_t serial;    /* a scheduled run's number (see `schedule`), else -1 */
    int64_t stopped;   /* this process was stopped and continued during the run */
};

struct command {
    uint32_t flags;
    int nice;
    uid_t uid;
    gid_t gid;
    size_t ngroups;
    gid_t *groups;
    size_t cpuset_len;
    cpu_set_t *cpuset;
    char *path, *cwd;
    char **argv, **envp;
    int fd[3]; /* -1: inherit the helper's (the harness's) own */
    char *blob;
};

/* cgroup.procs of the session's cgroup (argv[2]), or -1: commands run with
 * a timeout join it before exec, so that cgroup.kill reaches every process
 * they start, however it detaches. Its cgroup.kill and the directory's
 * path are kept for `leave`: when cmdscope is killed, this process empties
 * and removes the cgroup cmdscope can no longer remove. */
static int cgroup_procs = -1;
static int cgroup_kill = -1;
static char cgroup_dir[4096];

static struct command **commands;
static size_t ncommands;

struct child_ctx {
    const struct command *c;
    char *const *envp; /* the command's, or a run's own (`run_env`) */
    volatile int failed_step, error;
};

/* The child's stack: the child only runs a few system calls before exec. */
static char child_stack[64 * 1024] __attribute__((aligned(16)));

static int read_full(int fd, void *buf, size_t n) {
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n) {
    const char *p = buf;
    while (n > 0) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int send_msg(uint32_t type, const void *payload, uint32_t len) {
    char buf[sizeof(struct header) + sizeof(struct result)];
    struct header h = {type, len};
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, payload, len);
    return write_full(SOCK, buf, sizeof h + len);
}

/* The read-only file mappings that hold no private copies (our code and
 * constants): the loadable segments of this program (and, when it is linked
 * dynamically, of its libraries) that are not writable. The pages made
 * read-only after relocation (RELRO), which do hold private copies, lie in
 * a writable segment. Read from the program headers by the first `trim`,
 * they are the ranges /proc/self/smaps listed as file-backed, read-only and
 * without anonymous pages, without reading smaps, whose page-table walk
 * cost each spawner about 0.1 ms of its start. A static program's mappings
 * do not change after that, so later trims (one per PREPARE, and the copies
 * FORK makes) drop the same ranges. */
#define TRIM_RANGES 16
static struct {
    unsigned long start, end;
} trim_ranges[TRIM_RANGES];
static int ntrim_ranges = -1;

/* One loaded object's read-only segments: the program (named "") and the
 * libraries loaded from files, not the vDSO, which no file backs. */
static int add_trim_ranges(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name[0] != 0 && info->dlpi_name[0] != '/') return 0;
    unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum && ntrim_ranges < TRIM_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) || ph->p_memsz == 0) continue;
        unsigned long start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        unsigned long end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
        /* Never into the first page of a writable segment. */
        for (int j = 0; j < info->dlpi_phnum; j++) {
            const ElfW(Phdr) *w = &info->dlpi_phdr[j];
            if (w->p_type != PT_LOAD || !(w->p_flags & PF_W)) continue;
            unsigned long wstart = (info->dlpi_addr + w->p_vaddr) & ~(page - 1);
            if (wstart >= start && wstart < end) end = wstart;
        }
        if (end > start) {
            trim_ranges[ntrim_ranges].start = start;
            trim_ranges[ntrim_ranges++].end = end;
        }
    }
    return 0;
}

static void find_trim_ranges(void) {
    ntrim_ranges = 0;
    dl_iterate_phdr(add_trim_ranges, NULL);
}

/* Resets the high-water mark of our resident size to the current one. */
static void reset_peak(void) {
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        /* "5" resets the peak resident size to the current one (proc(5)). */
        if (write(fd, "5", 1) < 0) {
        }
        close(fd);
    }
}

/* Drops the pages of read-only file mappings that hold no private copies
 * (our code and constants: they fault back in from the page cache when used)
 * and resets the high-water mark to what is left. MADV_RANDOM stops
 * fault-around from mapping 16 pages for every page touched later. */
static void trim(void) {
    if (ntrim_ranges < 0) find_trim_ranges();
    for (int i = 0; i < ntrim_ranges; i++) {
        void *at = (void *)trim_ranges[i].start;
        size_t len = trim_ranges[i].end - trim_ranges[i].start;
        madvise(at, len, MADV_RANDOM);
        madvise(at, len, MADV_DONTNEED);
    }
    reset_peak();
}

static void prepare(uint32_t len, int *fds, int nfds) {
    char *blob = malloc(len + 1);
    struct command *c = calloc(1, sizeof *c);
    if (!blob || !c || read_full(SOCK, blob, len) < 0 || len < sizeof(struct prepare_fixed)) _exit(3);
    blob[len] = 0;
    struct prepare_fixed fx;
    memcpy(&fx, blob, sizeof fx);
    char *p = blob + sizeof fx;
    c->flags = fx.flags;
    c->nice = fx.nice;
    c->uid = fx.uid;
    c->gid = fx.gid;
    c->ngroups = fx.ngroups;
    c->groups = (gid_t *)p; /* the blob is malloc'd: aligned for gid_t */
    p += sizeof(gid_t) * fx.ngroups;
    c->cpuset_len = fx.cpuset_len;
    c->cpuset = malloc(fx.cpuset_len ? fx.cpuset_len : 1);
    if (!c->cpuset) _exit(3);
    memcpy(c->cpuset, p, fx.cpuset_len);
    p += fx.cpuset_len;
    c->path = p;
    p += strlen(p) + 1;
    c->cwd = NULL;
    if (fx.flags & F_CWD) {
        c->cwd = p;
        p += strlen(p) + 1;
    }
    c->argv = calloc(fx.argc + 1, sizeof(char *));
    c->envp = calloc(fx.envc + 1, sizeof(char *));
    if (!c->argv || !c->envp) _exit(3);
    for (uint32_t i = 0; i < fx.argc; i++) {
        c->argv[i] = p;
        p += strlen(p) + 1;
    }
    for (uint32_t i = 0; i < fx.envc; i++) {
        c->envp[i] = p;
        p += strlen(p) + 1;
    }
    if (p > blob + len + 1) _exit(3);
    for (int i = 0; i < 3; i++) c->fd[i] = -1;
    for (int i = 0; i < nfds && i < 3; i++) {
        int t = fx.fd_target[i];
        if (t >= 0 && t < 3) c->fd[t] = fds[i];
    }
    c->blob = blob;
    if (fx.id != ncommands) _exit(3);
    struct command **grown = realloc(commands, (ncommands + 1) * sizeof *commands);
    if (!grown) _exit(3);
    commands = grown;
    commands[ncommands++] = c;
    /* The buffers above are part of the floor now; nothing else may be. */
    trim();
}

/* SIGUSR1 as cmdscope was started with it, which the commands must get:
 * ignored, or blocked (exec keeps both), though this process catches it. */
static int usr1_ignored, usr1_blocked, hup_ignored;

static void child_fail(struct child_ctx *ctx, int step) {
    ctx->error = errno;
    ctx->failed_step = step;
    _exit(127);
}

static int child_main(void *arg) {
    struct child_ctx *ctx = arg;
    const struct command *c = ctx->c;
    /* Its own process group: a timeout kills the group, and a terminal's
     * Ctrl-C reaches the harness, which then cleans up. */
    if (setpgid(0, 0) != 0) child_fail(ctx, STEP_SETPGID);
    if (usr1_ignored) signal(SIGUSR1, SIG_IGN);
    /* Under `nohup cmdscope ...` the command ignores hangups too. */
    if (hup_ignored) signal(SIGHUP, SIG_IGN);
    if (usr1_blocked) {
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, NULL);
    }
    if ((c->flags & F_CGROUP) && cgroup_procs >= 0 && write(cgroup_procs, "0", 1) != 1)
        child_fail(ctx, STEP_CGROUP);
    for (int i = 0; i < 3; i++)
        if (c->fd[i] >= 0 && dup2(c->fd[i], i) < 0) child_fail(ctx, STEP_REDIRECT);
    if ((c->flags & F_CWD) && chdir(c->cwd) != 0) child_fail(ctx, STEP_CHDIR);
    if ((c->flags & F_NICE) && setpriority(PRIO_PROCESS, 0, c->nice) != 0) child_fail(ctx, STEP_NICE);
    if ((c->flags & F_CPUS) && sched_setaffinity(0, c->cpuset_len, c->cpuset) != 0)
        child_fail(ctx, STEP_CPUS);
    if (c->flags & F_USER) {
        /* Raw system calls: glibc's wrappers would try to change every
         * thread of the process, which this child is not part of. */
        if (syscall(SYS_setgroups, c->ngroups, c->groups) != 0 || syscall(SYS_setgid, c->gid) != 0 ||
            syscall(SYS_setuid, c->uid) != 0)
            child_fail(ctx, STEP_USER);
    }
    if (c->flags & F_COUNTERS) {
        /* The harness opens the counters on this pid, then says "go". */
        int32_t pid = (int32_t)syscall(SYS_getpid);
        struct header h;
        if (send_msg(MSG_PID, &pid, sizeof pid) != 0 || read_full(SOCK, &h, sizeof h) != 0 || h.type != MSG_GO)
            child_fail(ctx, STEP_SYNC);
    }
    execve(c->path, c->argv, ctx->envp);
    child_fail(ctx, STEP_EXEC);
    return 127;
}

static uint64_t field(const char *text, const char *key) {
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The command running now (its own process group), for `parent_died`. */
static volatile pid_t running;

/* Set while a schedule is being made (see `schedule`): cmdscope's death
 * then ends it, after its finished runs' reports are written, instead of
 * ending this process at once. */
static volatile sig_atomic_t in_schedule, parent_gone;
/* When cmdscope died (CLOCK_MONOTONIC, ns): a run that ended before it is
 * a finished run. */
static volatile int64_t died_at;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Set by SIGCONT: something stopped this process (a command can stop its
 * parent, `kill -STOP $PPID`) and cmdscope continued it. The run then in
 * progress was timed across the stop, so its report says so. */
static volatile sig_atomic_t continued;

static void on_continue(int sig) {
    (void)sig;
    continued = 1;
}

/* SIGTSTP, SIGTTIN, SIGTTOU: caught so that they do not stop this process. */
static void caught_stop(int sig) { (void)sig; }

/* Ends this process after cmdscope's death: every process left in the
 * session's cgroup is killed, our children reaped, and the cgroup removed
 * (it must be empty first; bounded, about a second). Only calls that are
 * safe in a signal handler. */
static void leave(void) {
    if (cgroup_kill >= 0) {
        if (write(cgroup_kill, "1", 1) < 0) {
        }
        for (int i = 0; i < 1000; i++) {
            int status;
            while (waitpid(-1, &status, WNOHANG) > 0) {
            }
            if (rmdir(cgroup_dir) == 0 || errno == ENOENT) break;
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    _exit(0);
}

/* cmdscope is gone (the kernel's parent-death signal, asked for as SIGTERM
 * so that it can be caught): the running command and its process group go
 * with it, so a `kill -9` of cmdscope leaves nothing behind. */
static void parent_died(int sig) {
    (void)sig;
    died_at = now_ns();
    pid_t pid = running;
    if (pid > 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    /* A command started a moment ago may not be in `running` yet (the
     * spawner resumes after its exec only when scheduled): every child of
     * ours is a command, so kill each with its group. Only read, open and
     * kill here, which are safe in a handler. */
    int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char text[4096];
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        pid_t child = 0;
        for (ssize_t i = 0; i < n; i++) {
            if (text[i] >= '0' && text[i] <= '9') {
                child = child * 10 + (text[i] - '0');
            } else if (child > 0) {
                kill(-child, SIGKILL);
                kill(child, SIGKILL);
                child = 0;
            }
        }
        if (child > 0) {
            kill(-child, SIGKILL);
            kill(child, SIGKILL);
        }
    }
    /* In a schedule, the reports of its finished runs are still to be
     * written: the store writer reads what cmdscope did not (see
     * `schedule`). Anywhere else every report is written already. */
    if (!in_schedule) leave();
    parent_gone = 1;
}

/* Batch mode (see `schedule`): set by SIGUSR1, from cmdscope, which cuts the
 * batch short (Ctrl-C); cleared by a RESUME. */
static volatile sig_atomic_t stop_batch;

static void stop_requested(int sig) {
    (void)sig;
    stop_batch = 1;
}

/* Batch mode makes this process the subreaper of the runs, so that what a
 * run leaves running is adopted here, where it is killed before the next
 * run starts; this is our own children file, kept open. */
static int children_fd = -1;

/* This process's own /proc/self/io, kept open (see `run_one`). */
static int self_io = -1;

/* After a run (batch mode): kills and reaps what it left running, with its
 * process groups, until our children file is empty; returns how many
 * processes that was. One pread when nothing was left. */
static int64_t kill_leftovers(void) {
    pid_t seen[64];
    int nseen = 0;
    int64_t count = 0;
    /* Bounded (about ten seconds), as cmdscope's own cleanup, in case a
     * process we may not kill never exits. */
    for (int round = 0; round < 10000; round++) {
        char text[4096];
        ssize_t n = pread(children_fd, text, sizeof text - 1, 0);
        if (n <= 0) break;
        /* Exited ones first (they are listed until reaped), then list
         * again: what is listed then was still running. */
        int status, reaped = 0;
        while (waitpid(-1, &status, WNOHANG) > 0) reaped = 1;
        if (reaped) continue;
        pid_t child = 0;
        for (ssize_t i = 0; i <= n; i++) {
            if (i < n && text[i] >= '0' && text[i] <= '9') {
                child = child * 10 + (text[i] - '0');
                continue;
            }
            if (child <= 0) continue;
            kill(-child, SIGKILL);
            kill(child, SIGKILL);
            int known = 0;
            for (int k = 0; k < nseen; k++) known |= seen[k] == child;
            if (!known) {
                count++;
                if (nseen < 64) seen[nseen++] = child;
            }
            child = 0;
        }
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return count;
}

/* Runs command `id` once, with environment `envp` (NULL: the command's),
 * and fills `res`. */
static void run_one(uint32_t id, char *const *envp, struct result *out) {
    struct result res;
    memset(&res, 0, sizeof res);
    res.serial = -1;
    if (id >= ncommands) _exit(3);
    const struct command *c = commands[id];
    struct child_ctx ctx = {c, envp ? envp : c->envp, 0, 0};
    /* The run's I/O: what reaping it adds to this process's own counters
     * (the kernel adds a reaped child's, and what it reaped, to its
     * parent's), read before and after. One pread each on a file kept
     * open, where opening /proc/<pid>/io cost a path lookup per run: 4 %
     * of a /bin/true run. Nothing of ours happens in between but the
     * first read, whose own bytes count after its snapshot. */
    char before[512];
    ssize_t nbefore = (c->flags & F_PROC_IO) && self_io >= 0 ? pread(self_io, before, sizeof before - 1, 0) : -1;
    struct timespec start, end;
    continued = 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = clone(child_main, child_stack + sizeof child_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &ctx);
    if (pid < 0) {
        res.failed_step = STEP_CLONE;
        res.error = errno;
        *out = res;
        return;
    }
    res.pid = pid;
    running = pid;
    if (parent_gone) {
        /* cmdscope died as this run started: it goes too. */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    if (ctx.failed_step) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        running = 0;
        res.failed_step = ctx.failed_step;
        res.error = ctx.error;
        *out = res;
        return;
    }
    if (c->flags & F_STARTED) {
        /* cmdscope's timeout counts from here, not from its request, which
         * reached this process late on a busy machine: a run killed before
         * its --timeout was a run cut short. */
        int64_t at[2] = {start.tv_sec, start.tv_nsec};
        send_msg(MSG_STARTED, at, sizeof at);
    }
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    running = 0;
    if (nbefore > 0) {
        char after[512];
        ssize_t n = pread(self_io, after, sizeof after - 1, 0);
        if (n > 0) {
            before[nbefore] = 0;
            after[n] = 0;
            res.io_ok = 1;
#define DELTA(key) (field(after, key) - field(before, key))
            res.rchar = DELTA("rchar: ") - (uint64_t)nbefore;
            res.wchar = DELTA("wchar: ");
            res.read_bytes = DELTA("\nread_bytes: ");
            res.write_bytes = DELTA("\nwrite_bytes: ");
            res.cancelled_write_bytes = DELTA("cancelled_write_bytes: ");
#undef DELTA
        }
    }
    res.status = status;
    res.start_sec = start.tv_sec;
    res.start_nsec = start.tv_nsec;
    res.end_sec = end.tv_sec;
    res.end_nsec = end.tv_nsec;
    res.utime_sec = ru.ru_utime.tv_sec;
    res.utime_usec = ru.ru_utime.tv_usec;
    res.stime_sec = ru.ru_stime.tv_sec;
    res.stime_usec = ru.ru_stime.tv_usec;
    res.maxrss_kib = ru.ru_maxrss;
    res.minflt = ru.ru_minflt;
    res.majflt = ru.ru_majflt;
    res.nvcsw = ru.ru_nvcsw;
    res.nivcsw = ru.ru_nivcsw;
    if (children_fd >= 0) res.leftovers = kill_leftovers();
    res.stopped = continued;
    *out = res;
}

static void run(uint32_t id) {
    struct result res;
    run_one(id, NULL, &res);
    send_msg(MSG_RESULT, &res, sizeof res);
}

/* The most variables one RUN_ENV may set. */
#define RUN_ENV_MAX 64

/* RUN_ENV {id, count, count NUL-terminated NAME=VALUE}: one run of command
 * `id` whose environment is the command's with these set (a name the
 * command has takes the new value). The run's environment is built here,
 * before the clone, in buffers kept from run to run: the child only
 * passes it to exec, and neither this process's own environment nor the
 * command's prepared one changes, so the next RUN sees the command's as
 * prepared. */
static void run_env(uint32_t len) {
    static char *body;
    static size_t body_cap;
    static char **envp;
    static size_t envp_cap;
    uint32_t head[2];
    if (len < sizeof head || read_full(SOCK, head, sizeof head) != 0) _exit(3);
    size_t rest = len - sizeof head;
    if (rest + 1 > body_cap) {
        free(body);
        body_cap = rest + 1;
        body = malloc(body_cap);
        if (!body) _exit(3);
    }
    if (read_full(SOCK, body, rest) != 0) _exit(3);
    body[rest] = 0;
    uint32_t id = head[0], count = head[1];
    if (id >= ncommands || count > RUN_ENV_MAX) _exit(3);
    char *vars[RUN_ENV_MAX];
    size_t names[RUN_ENV_MAX];
    char *p = body;
    for (uint32_t i = 0; i < count; i++) {
        char *eq = p < body + rest ? strchr(p, '=') : NULL;
        if (!eq || eq == p) _exit(3);
        vars[i] = p;
        names[i] = (size_t)(eq - p) + 1; /* the name and its '=' */
        p += strlen(p) + 1;
        if (p > body + rest) _exit(3);
    }
    const struct command *c = commands[id];
    size_t n = 0;
    while (c->envp[n]) n++;
    if (n + count + 1 > envp_cap) {
        free(envp);
        envp_cap = n + count + 1;
        envp = malloc(envp_cap * sizeof *envp);
        if (!envp) _exit(3);
    }
    size_t k = 0;
    for (size_t j = 0; j < n; j++) {
        int replaced = 0;
        for (uint32_t i = 0; i < count && !replaced; i++)
            replaced = !strncmp(c->envp[j], vars[i], names[i]);
        if (!replaced) envp[k++] = c->envp[j];
    }
    for (uint32_t i = 0; i < count; i++) envp[k++] = vars[i];
    envp[k] = NULL;
    struct result res;
    run_one(id, envp, &res);
    send_msg(MSG_RESULT, &res, sizeof res);
}

/* Reports of a schedule's runs not yet written: written together, one
 * write for up to FLUSH_RUNS runs or for the runs of FLUSH_NS, so that the
 * write and cmdscope's wake-up are not paid per run. */
#define FLUSH_RUNS 8
#define FLUSH_NS 2000000L

struct report {
    struct header h;
    struct result res;
};

static struct report unsent[FLUSH_RUNS];
static int nunsent;

static void flush_reports(void) {
    if (nunsent > 0) write_full(SOCK, unsent, (size_t)nunsent * sizeof unsent[0]);
    nunsent = 0;
}

/* Runs handed over in SCHEDULEs so far: a scheduled run's serial number is
 * its position among them, counted alike by cmdscope (made or not). */
static uint64_t scheduled_total;

/* SCHEDULE {flags, count, count ids}: runs them back to back without waiting
 * for a request per run, writes the runs' RESULTs as they end (grouped, see
 * `flush_reports`; cmdscope reads them off the critical path), then DONE
 * with the number made in its length field. Stops early on SIGUSR1 (Ctrl-C in cmdscope)
 * and, with S_STOP_ON_FAILURE, after a run that failed, as the per-run
 * path would stop the session there; either stop holds for the batches
 * already queued behind this one until cmdscope sends RESUME.
 *
 * When cmdscope dies meanwhile, the runs that ended before its death are
 * still reported, and this process exits: the store writer holds a copy
 * of cmdscope's end of the socket and stores the reports cmdscope never
 * read, so a `kill -9` loses no finished run (the run then in progress,
 * killed, is not one). */
static void schedule(uint32_t len) {
    uint32_t head[2];
    uint32_t ids[SCHEDULE_MAX];
    if (len < sizeof head || read_full(SOCK, head, sizeof head) != 0) _exit(3);
    uint32_t count = head[1];
    if (count > SCHEDULE_MAX || len != sizeof head + count * sizeof(uint32_t) ||
        read_full(SOCK, ids, count * sizeof(uint32_t)) != 0)
        _exit(3);
    if (children_fd < 0) {
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        children_fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
        if (children_fd < 0) _exit(3);
    }
    uint64_t first = scheduled_total;
    scheduled_total += count;
    in_schedule = 1;
    uint32_t made = 0;
    int64_t since = 0; /* end of the first run not yet written, ns */
    while (made < count && !stop_batch && !parent_gone) {
        struct report *r = &unsent[nunsent++];
        run_one(ids[made], NULL, &r->res);
        r->res.serial = (int64_t)(first + made);
        made++;
        r->h.type = MSG_RESULT;
        r->h.len = sizeof r->res;
        int64_t end = r->res.end_sec * 1000000000L + r->res.end_nsec;
        if (parent_gone) {
            /* Killed by `parent_died`, unless it had ended before: a run
             * that exited by itself is a finished run. */
            int status = (int)r->res.status;
            if (r->res.failed_step != 0 || (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && end >= died_at))
                nunsent--;
            break;
        }
        if (nunsent == 1) since = end;
        if ((head[0] & S_STOP_ON_FAILURE) && (r->res.failed_step != 0 || r->res.status != 0)) stop_batch = 1;
        if (nunsent == FLUSH_RUNS || end - since >= FLUSH_NS) flush_reports();
    }
    flush_reports();
    if (parent_gone) leave();
    struct header done = {MSG_DONE, made};
    write_full(SOCK, &done, sizeof done);
    in_schedule = 0;
}

/* cmdscope's pid (argv[1]): the parent every spawner must have. */
static pid_t harness;

/* The most copies one FORK asks for (its sockets come in one message; its
 * answer fits `send_msg`'s buffer). */
#define FORK_MAX 32
_Static_assert(FORK_MAX * sizeof(int32_t) <= sizeof(struct result), "FORK's answer");

/* FORK (with up to FORK_MAX new sockets as SCM_RIGHTS): for each socket, a
 * copy of this process becomes another spawner serving it, and this one
 * answers PID {one int32 per copy made: its pid, or minus the errno of the
 * one that failed, the last}. Concurrency mode starts its slots' spawners
 * so, from one spawner that runs nothing itself: a copy of this small,
 * already trimmed process costs a fraction of a new one's exec, start-up
 * and first trim, and one request for many copies is one wake-up of this
 * process, not one per slot (on a busy machine each wake-up waits for a
 * CPU). CLONE_PARENT makes each copy cmdscope's child, as every spawner is
 * (it waits for it, and gets cmdscope's death as SIGTERM). Returns in each
 * copy, which then serves its own socket. */
static void fork_spawner(int *fds, int nfds) {
    int32_t answer[FORK_MAX];
    int made = 0;
    if (nfds < 1 || ncommands || children_fd >= 0 || cgroup_procs >= 0) {
        answer[made++] = -EINVAL;
    } else {
        for (int i = 0; i < nfds; i++) {
            pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
            if (pid == 0) {
                if (dup2(fds[i], SOCK) < 0) _exit(3);
                for (int j = 0; j < nfds; j++) close(fds[j]);
                fcntl(SOCK, F_SETFD, FD_CLOEXEC);
                setpgid(0, 0);
                prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
                if (getppid() != harness) parent_died(SIGTERM);
                /* The copy's own counters: /proc/self was the original's. */
                if (self_io >= 0) close(self_io);
                self_io = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
                reset_peak();
                return;
            }
            answer[made++] = pid < 0 ? -errno : pid;
            if (pid < 0) break;
        }
    }
    for (int i = 0; i < nfds; i++) close(fds[i]);
    send_msg(MSG_PID, answer, (uint32_t)(made * sizeof answer[0]));
}

int main(int argc, char **argv) {
    /* The harness ignores SIGPIPE (the Rust runtime does) and catches
     * SIGINT/SIGTERM; exec reset the caught ones, and the ignored one is
     * reset here, so every child starts with default dispositions. */
    signal(SIGPIPE, SIG_DFL);
    /* cmdscope's death arrives as SIGTERM (see `parent_died`); a command's
     * handlers are reset by its exec. */
    struct sigaction died;
    memset(&died, 0, sizeof died);
    died.sa_handler = parent_died;
    sigaction(SIGTERM, &died, NULL);
    /* A stopped process whose parent dies gets SIGHUP and SIGCONT from the
     * kernel (its process group is orphaned): cmdscope died while this
     * process was stopped, by a command that stopped its parent. */
    struct sigaction hup_before;
    sigaction(SIGHUP, &died, &hup_before);
    hup_ignored = hup_before.sa_handler == SIG_IGN;
    /* cmdscope cuts a batch short with SIGUSR1 (no SA_RESTART: a wait in
     * progress returns, and the loops around it retry). */
    struct sigaction stop, before;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = stop_requested;
    sigaction(SIGUSR1, &stop, &before);
    usr1_ignored = before.sa_handler == SIG_IGN;
    sigset_t mask, usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_UNBLOCK, &usr1, &mask);
    usr1_blocked = sigismember(&mask, SIGUSR1);
    /* A command may stop its parent. SIGSTOP cannot be caught: cmdscope
     * sees this process stopped and continues it (see `continued`). The
     * stops that can be caught are caught and do nothing; exec resets
     * them, so the commands still get the default. */
    struct sigaction cont, ignore;
    memset(&cont, 0, sizeof cont);
    cont.sa_handler = on_continue;
    cont.sa_flags = SA_RESTART;
    sigaction(SIGCONT, &cont, NULL);
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = caught_stop;
    ignore.sa_flags = SA_RESTART;
    sigaction(SIGTSTP, &ignore, NULL);
    sigaction(SIGTTIN, &ignore, NULL);
    sigaction(SIGTTOU, &ignore, NULL);
    /* Started from a memfd, its name would be the descriptor's number: a
     * name people (and `ps`, and the commands' parent checks) recognise. */
    prctl(PR_SET_NAME, "cmdscope-spawn", 0, 0, 0);
    /* Keep only stdin/stdout/stderr (the harness's) and the socket. */
    if (syscall(SYS_close_range, SOCK + 1, ~0U, 0) != 0) {
        for (int fd = SOCK + 1; fd < 1024; fd++) close(fd);
    }
    fcntl(SOCK, F_SETFD, FD_CLOEXEC);
    if (argc > 2) {
        cgroup_procs = open(argv[2], O_WRONLY | O_CLOEXEC);
        const char *procs = "/cgroup.procs";
        size_t len = strlen(argv[2]), tail = strlen(procs);
        if (len > tail && len - tail + 16 < sizeof cgroup_dir && !strcmp(argv[2] + len - tail, procs)) {
            char kill_path[sizeof cgroup_dir];
            memcpy(cgroup_dir, argv[2], len - tail);
            cgroup_dir[len - tail] = 0;
            memcpy(kill_path, cgroup_dir, len - tail);
            memcpy(kill_path + len - tail, "/cgroup.kill", sizeof "/cgroup.kill");
            cgroup_kill = open(kill_path, O_WRONLY | O_CLOEXEC);
        }
    }
    /* cmdscope's death arrives as SIGTERM (asked for here: cmdscope starts
     * this process with posix_spawn); argv[1] is cmdscope's pid: a parent
     * of another pid means it died before we asked. */
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    harness = argc < 2 ? 0 : (pid_t)strtol(argv[1], NULL, 10);
    if (argc < 2 || getppid() != harness) parent_died(SIGTERM);
    self_io = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
    trim();
    int spin = 0;
    for (;;) {
        struct header h;
        if (parent_gone) leave(); /* it died as a schedule ended */
        /* After a run, the next request usually follows within microseconds:
         * watching for it for a short while (50 µs) saves the sleep and the
         * wake-up that would add about 12 µs to every run. */
        if (spin) {
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            do {
                if (recv(SOCK, &h, sizeof h, MSG_DONTWAIT | MSG_PEEK) == (ssize_t)sizeof h) break;
                clock_gettime(CLOCK_MONOTONIC, &t);
            } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 50000);
        }
        int fds[FORK_MAX];
        int nfds = 0;
        char control[CMSG_SPACE(sizeof fds)];
        struct iovec iov = {&h, sizeof h};
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        ssize_t r = recvmsg(SOCK, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
        if (r < 0 && errno == EINTR) continue;
        if (r != sizeof h) return 0; /* the harness is gone */
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                nfds = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                if (nfds > FORK_MAX) nfds = FORK_MAX;
                memcpy(fds, CMSG_DATA(cm), (size_t)nfds * sizeof(int));
            }
        }
        spin = h.type == MSG_RUN || h.type == MSG_RUN_ENV || h.type == MSG_SCHEDULE;
        if (h.type == MSG_PREPARE) {
            prepare(h.len, fds, nfds);
        } else if (h.type == MSG_RUN) {
            run(h.len);
        } else if (h.type == MSG_RUN_ENV) {
            run_env(h.len);
        } else if (h.type == MSG_SCHEDULE) {
            schedule(h.len);
        } else if (h.type == MSG_RESUME) {
            stop_batch = 0;
        } else if (h.type == MSG_FORK) {
            fork_spawner(fds, nfds);
        } else {
            return 3;
        }
    }
}
