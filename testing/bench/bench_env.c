/* Machine description, peak memory and dates for the JSON lines. */
#define _POSIX_C_SOURCE 200809L
#include "bench_env.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void bench_machine(char *buf, size_t size) {
  char model[256] = "unknown CPU", line[512];
  int cpus = 0;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "processor", 9) == 0) cpus++;
      if (cpus <= 1 && strncmp(line, "model name", 10) == 0) {
        const char *p = strchr(line, ':');
        if (p) {
          p++;
          while (*p == ' ') p++;
          snprintf(model, sizeof model, "%s", p);
          model[strcspn(model, "\n")] = '\0';
        }
      }
    }
    fclose(f);
  }
  if (cpus == 0) cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(buf, size, "%s (%d cores)", model, cpus);
}

void bench_card(int device, char *buf, size_t size) {
  buf[0] = '\0';
  char cmd[128];
  snprintf(cmd, sizeof cmd, "nvidia-smi --query-gpu=name --format=csv,noheader -i %d 2>/dev/null", device);
  FILE *p = popen(cmd, "r");
  if (!p) return;
  if (!fgets(buf, (int)size, p)) buf[0] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  pclose(p);
}

double bench_peak_rss_mb(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return -1;
  return (double)u.ru_maxrss / 1024.0; /* Linux reports KiB */
}

double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_cpu_seconds(void) {
  struct rusage u;
  if (getrusage(RUSAGE_SELF, &u) != 0) return -1;
  return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_sec +
         1e-6 * (double)u.ru_stime.tv_usec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void bench_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }

void bench_date(char *buf, size_t size) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void bench_json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}
