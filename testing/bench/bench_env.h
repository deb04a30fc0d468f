/* What a benchmark line must say about where it ran: the CPU model and
 * core count, the GPU card, peak memory and the date. */
#ifndef VIC_BENCH_ENV_H
#define VIC_BENCH_ENV_H

#include <stddef.h>
#include <stdio.h>

/* "Intel(R) Xeon(R) ... (2 cores)" from /proc/cpuinfo. */
void bench_machine(char *buf, size_t size);
/* Name of CUDA device `device` from nvidia-smi, "" when there is none. */
void bench_card(int device, char *buf, size_t size);
/* Peak resident set size of this process so far, in MiB. */
double bench_peak_rss_mb(void);
/* User + system CPU seconds of this process (all threads) so far: with
 * other jobs on the machine, wall time alone overstates the cost. */
double bench_cpu_seconds(void);
/* Monotonic clock in seconds, for wall times. */
double bench_now(void);
/* v[0 .. n) in ascending order (medians and quantiles of timed calls). */
void bench_sort(double *v, int n);
/* Current UTC time as ISO 8601. */
void bench_date(char *buf, size_t size);
/* Writes s as a JSON string literal (quotes and escapes included). */
void bench_json_str(FILE *f, const char *s);

#endif
