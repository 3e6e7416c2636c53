/* kchaos's clock shim: preloaded (LD_PRELOAD) into the pods of a plan with a clock fault.
 * It offsets the wall clock only (CLOCK_REALTIME and its coarse variant, gettimeofday,
 * time) by the nanoseconds written in the file KCHAOS_CLOCK_FILE, re-read at most every
 * KCHAOS_CLOCK_REFRESH_MS (default 50) of the real monotonic clock; no file, or no number
 * in it: offset 0. Monotonic clocks, sleeps and timed waits are the kernel's, as under a
 * real clock step (why not libfaketime: docs/faults.md#clock). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static const char *clock_file;
static long long refresh_ns = 50000000LL;
static _Atomic long long offset_ns;
static _Atomic long long next_read_ns;

__attribute__((constructor)) static void kchaos_clock_init(void) {
    real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    clock_file = getenv("KCHAOS_CLOCK_FILE");
    const char *refresh = getenv("KCHAOS_CLOCK_REFRESH_MS");
    if (refresh != NULL && atoll(refresh) > 0) refresh_ns = atoll(refresh) * 1000000LL;
}

static void refresh_offset(void) {
    struct timespec now;
    if (clock_file == NULL || real_clock_gettime == NULL) return;
    real_clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    long long mono = now.tv_sec * 1000000000LL + now.tv_nsec;
    long long due = atomic_load(&next_read_ns);
    if (mono < due || !atomic_compare_exchange_strong(&next_read_ns, &due, mono + refresh_ns))
        return;  /* read lately, or another thread reads it now */
    char text[64];
    long long value = 0;
    int fd = open(clock_file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n > 0) {
            text[n] = '\0';
            value = strtoll(text, NULL, 10);
        }
    }
    atomic_store(&offset_ns, value);
}

static int offset_realtime(struct timespec *tp) {
    refresh_offset();
    long long total = tp->tv_nsec + atomic_load(&offset_ns) % 1000000000LL;
    tp->tv_sec += atomic_load(&offset_ns) / 1000000000LL;
    tp->tv_sec += total / 1000000000LL;
    tp->tv_nsec = total % 1000000000LL;
    if (tp->tv_nsec < 0) {
        tp->tv_nsec += 1000000000LL;
        tp->tv_sec -= 1;
    }
    return 0;
}

int clock_gettime(clockid_t clock, struct timespec *tp) {
    if (real_clock_gettime == NULL) kchaos_clock_init();
    int result = real_clock_gettime(clock, tp);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
        offset_realtime(tp);
    return result;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    clock_gettime(CLOCK_REALTIME, &ts);
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) *out = ts.tv_sec;
    return ts.tv_sec;
}
