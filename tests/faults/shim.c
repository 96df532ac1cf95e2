/*
 * Fault-injection shim for tests/faults.rs, loaded with LD_PRELOAD into one tool process.
 *
 * It wraps the libc calls through which the tools make data durable and fails the Nth call of
 * one kind with a chosen errno, without performing it (as a failing disk would refuse it):
 *
 *   sync    fsync, fdatasync (files and directories)
 *   write   write, pwrite, pwrite64, writev, pwritev (regular files other than stdin, stdout
 *           and stderr: a failed write to a terminal, a pipe or a redirected stderr says
 *           nothing about the log; nor the topics' change boards, `*.ends`, hints for
 *           readers whose failed writes are ignored by design)
 *   rename  rename, renameat, renameat2
 *
 * Environment:
 *   KAFKIT_FAULT_CALL    sync | write | rename; unset or empty: only count
 *   KAFKIT_FAULT_AT      N, 1-based: the call that fails
 *   KAFKIT_FAULT_ERRNO   EIO | ENOSPC
 *   KAFKIT_FAULT_STICKY  1: every call of that kind after the Nth fails too (a disk that stays
 *                        full or dead), and the Nth write/pwrite stores the first half of its
 *                        bytes and returns that short count, as a write that fills the disk
 *                        does; else only the Nth call fails
 *   KAFKIT_FAULT_REPORT  a file that receives, at exit, "sync=S write=W rename=R injected=I":
 *                        the calls of each kind made and how many were failed, so that the test
 *                        knows when N has gone past the last call
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum kind { SYNC, WRITE, RENAME, KINDS };

static long counts[KINDS];
static long injected;
static int target = -1;
static long fail_at;
static int fail_errno = EIO;
static int sticky;

__attribute__((constructor)) static void setup(void) {
    const char *call = getenv("KAFKIT_FAULT_CALL");
    const char *at = getenv("KAFKIT_FAULT_AT");
    const char *err = getenv("KAFKIT_FAULT_ERRNO");
    const char *st = getenv("KAFKIT_FAULT_STICKY");
    if (call && strcmp(call, "sync") == 0) target = SYNC;
    if (call && strcmp(call, "write") == 0) target = WRITE;
    if (call && strcmp(call, "rename") == 0) target = RENAME;
    fail_at = at ? atol(at) : 0;
    if (err && strcmp(err, "ENOSPC") == 0) fail_errno = ENOSPC;
    sticky = st && strcmp(st, "1") == 0;
}

/* The real function, looked up once. */
#define REAL(name) \
    static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

enum verdict { PASS, FAIL, SHORT };

/* Counts a call of `k` and says what becomes of it (errno is set for FAIL). */
static enum verdict judge(enum kind k) {
    long n = __atomic_add_fetch(&counts[k], 1, __ATOMIC_SEQ_CST);
    if ((int)k != target || fail_at <= 0) return PASS;
    if (n == fail_at || (sticky && n > fail_at)) {
        __atomic_add_fetch(&injected, 1, __ATOMIC_SEQ_CST);
        if (sticky && k == WRITE && n == fail_at) return SHORT;
        errno = fail_errno;
        return FAIL;
    }
    return PASS;
}

/* True if the call must fail; for calls that cannot be cut short. */
static int fault(enum kind k) {
    enum verdict v = judge(k);
    if (v == SHORT) errno = fail_errno;
    return v != PASS;
}

/* A change board (`topics/<id>.ends`): a hint for readers whose writes may fail by design. */
static int board(int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 5) return 0;
    path[n] = 0;
    return strcmp(path + n - 5, ".ends") == 0;
}

static int regular(int fd) {
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !board(fd);
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("KAFKIT_FAULT_REPORT");
    if (!path || !*path) return;
    char line[128];
    int len = snprintf(line, sizeof line, "sync=%ld write=%ld rename=%ld injected=%ld\n",
                       counts[SYNC], counts[WRITE], counts[RENAME], injected);
    REAL(write);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (real_write(fd, line, (size_t)len) != len) { /* the test sees a short report */ }
    close(fd);
}

int fsync(int fd) {
    REAL(fsync);
    return fault(SYNC) ? -1 : real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    return fault(SYNC) ? -1 : real_fdatasync(fd);
}

/* The verdict on a write of `count` bytes to `fd`, and how many bytes to pass on. */
static enum verdict judge_write(int fd, size_t *count) {
    if (!regular(fd)) return PASS;
    enum verdict v = judge(WRITE);
    if (v == SHORT && *count < 2) {
        errno = fail_errno;
        return FAIL;
    }
    if (v == SHORT) *count /= 2;
    return v;
}

ssize_t write(int fd, const void *buf, size_t count) {
    REAL(write);
    return judge_write(fd, &count) == FAIL ? -1 : real_write(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    REAL(pwrite);
    return judge_write(fd, &count) == FAIL ? -1 : real_pwrite(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    REAL(pwrite64);
    return judge_write(fd, &count) == FAIL ? -1 : real_pwrite64(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    REAL(writev);
    return regular(fd) && fault(WRITE) ? -1 : real_writev(fd, iov, iovcnt);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    REAL(pwritev);
    return regular(fd) && fault(WRITE) ? -1 : real_pwritev(fd, iov, iovcnt, offset);
}

int rename(const char *old, const char *new) {
    REAL(rename);
    return fault(RENAME) ? -1 : real_rename(old, new);
}

int renameat(int olddir, const char *old, int newdir, const char *new) {
    REAL(renameat);
    return fault(RENAME) ? -1 : real_renameat(olddir, old, newdir, new);
}

int renameat2(int olddir, const char *old, int newdir, const char *new, unsigned flags) {
    REAL(renameat2);
    return fault(RENAME) ? -1 : real_renameat2(olddir, old, newdir, new, flags);
}
