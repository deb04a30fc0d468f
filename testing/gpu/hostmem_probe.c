/* Host memory of a GPU machine, measured the ways the slab runs use it
 * (issue 16): first touch of fresh pageable memory by 1, 16 and all
 * threads, with and without transparent-huge-page advice, populated by
 * MADV_POPULATE_WRITE, written and read again warm; pinned memory made by
 * cudaHostAlloc and by cudaHostRegister; pinned copies both ways per GPU
 * alone and on every GPU at once; pageable device-to-host copies into
 * fresh and into warm memory.  One line per figure: seconds and GB/s
 * (10^9 bytes).  Under a minute on a 4-GPU machine with 16 GiB (HOSTMEM_GIB
 * sets it; the single-thread first touch writes a quarter).
 *
 * usage: hostmem_probe [GIB=16] */
#define _GNU_SOURCE
#include "bench_util.h"

#include <cuda_runtime_api.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void line(const char *what, size_t bytes, double s) {
  printf("%-64s %8.3f s %8.2f GB/s\n", what, s, s > 0 ? bytes / s / 1e9 : 0.0);
  fflush(stdout);
}

static int ok(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 1;
  printf("%s: %s\n", what, cudaGetErrorString(e));
  cudaGetLastError();
  return 0;
}

static void show_file(const char *path) {
  FILE *f = fopen(path, "r");
  char buf[256] = "(unreadable)";
  if (f) {
    if (!fgets(buf, sizeof buf, f)) snprintf(buf, sizeof buf, "(empty)");
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = 0;
  printf("%s: %s\n", path, buf);
}

/* Fresh memory: plain malloc (mmap'd at this size), or 2 MiB aligned
 * with huge-page advice. */
static char *fresh(size_t bytes, int huge) {
  void *p = NULL;
  if (!huge) return malloc(bytes);
  if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return NULL;
  if (madvise(p, bytes, MADV_HUGEPAGE) != 0) printf("  (madvise MADV_HUGEPAGE refused)\n");
  return p;
}

/* Every byte written by `threads` threads, each its own stretch. */
static double write_all(char *p, size_t bytes, int threads, int value) {
  const double t0 = bench_now();
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const size_t a = bytes / nt * t, b = t == nt - 1 ? bytes : bytes / nt * (t + 1);
    memset(p + a, value, b - a);
  }
  return bench_now() - t0;
}

static double read_all(const char *p, size_t bytes, int threads) {
  const double t0 = bench_now();
  uint64_t sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const size_t a = bytes / nt * t / 8 * 8, b = t == nt - 1 ? bytes / 8 * 8 : bytes / nt * (t + 1) / 8 * 8;
    const uint64_t *q = (const uint64_t *)(p + a);
    for (size_t i = 0; i < (b - a) / 8; ++i) sum += q[i];
  }
  if (sum == 42) printf(" ");
  return bench_now() - t0;
}

static void first_touch(size_t bytes, int threads, int huge) {
  char *p = fresh(bytes, huge);
  if (!p) { printf("no %zu bytes of host memory\n", bytes); return; }
  char what[128];
  snprintf(what, sizeof what, "first touch %s%.3g GiB, %d thread%s", huge ? "(MADV_HUGEPAGE) " : "",
           bytes / 1073741824.0, threads, threads == 1 ? "" : "s");
  line(what, bytes, write_all(p, bytes, threads, 1));
  free(p);
}

/* Pageable host memory: first touch, huge pages, populate, warm. */
static void host_part(size_t big, int all, int mid) {
  first_touch(big / 4, 1, 0);
  first_touch(big, mid, 0);
  first_touch(big, all, 0);
  first_touch(big / 4, 1, 1);
  first_touch(big, mid, 1);
  first_touch(big, all, 1);
  {
    char *p = fresh(big, 0);
    if (p) {
#ifdef MADV_POPULATE_WRITE
      const double t0 = bench_now();
      int refused = 0;
      const size_t block = (size_t)64 << 20;
#pragma omp parallel for num_threads(all) schedule(dynamic) reduction(| : refused)
      for (size_t o = 0; o < big; o += block) {
        const size_t len = big - o < block ? big - o : block;
        const uintptr_t a = ((uintptr_t)p + o + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + o + len) & ~(uintptr_t)4095;
        if (e > a) refused |= madvise((void *)a, e - a, MADV_POPULATE_WRITE) != 0;
      }
      line(refused ? "MADV_POPULATE_WRITE, all threads (REFUSED somewhere)" : "MADV_POPULATE_WRITE, all threads", big,
           bench_now() - t0);
#else
      printf("MADV_POPULATE_WRITE: not in these headers\n");
#endif
      line("write after populate (warm), all threads", big, write_all(p, big, all, 2));
      line("warm write, all threads", big, write_all(p, big, all, 3));
      line("warm write, 16 threads", big, write_all(p, big, mid, 4));
      line("warm write, 1 thread (a quarter)", big / 4, write_all(p, big / 4, 1, 5));
      line("warm read, all threads", big, read_all(p, big, all));
      line("warm read, 16 threads", big, read_all(p, big, mid));
      {
        const double t0 = bench_now();
#pragma omp parallel num_threads(all)
        {
          const int t = omp_get_thread_num(), nt = omp_get_num_threads();
          const size_t half = big / 2, a = half / nt * t, b = t == nt - 1 ? half : half / nt * (t + 1);
          memcpy(p + half + a, p + a, b - a);
        }
        line("warm memcpy (half to half), all threads", big / 2, bench_now() - t0);
      }
      free(p);
    }
  }

}

int main(int argc, char **argv) {
  const double t_start = bench_now();
  const double gib = argc > 1 ? atof(argv[1]) : getenv("HOSTMEM_GIB") ? atof(getenv("HOSTMEM_GIB")) : 16;
  const size_t big = (size_t)(gib * 1073741824.0);
  const int all = omp_get_max_threads(), mid = all < 16 ? all : 16;
  show_file("/sys/kernel/mm/transparent_hugepage/enabled");
  show_file("/sys/kernel/mm/transparent_hugepage/defrag");
  show_file("/sys/kernel/mm/transparent_hugepage/khugepaged/defrag");
  printf("threads: %d, page %ld bytes, host memory %.0f GiB\n", all, sysconf(_SC_PAGESIZE),
         (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 1073741824.0);

  /* pinned memory and the copies first (seconds), then pageable memory */
  int ngpu = 0;
  if (!ok(cudaGetDeviceCount(&ngpu), "cudaGetDeviceCount") || ngpu < 1) {
    printf("no GPU: pinned and device copies left out\n");
    host_part(big, all, mid);
    printf("hostmem_probe done in %.1f s\n", bench_now() - t_start);
    return 0;
  }
  ok(cudaSetDevice(0), "cudaSetDevice");
  ok(cudaFree(0), "context");
  const size_t pin = (size_t)4 << 30, per = (size_t)1 << 30;
  {
    void *h = NULL;
    double t0 = bench_now();
    if (ok(cudaHostAlloc(&h, pin, cudaHostAllocPortable), "cudaHostAlloc 4 GiB")) {
      line("cudaHostAlloc 4 GiB (portable)", pin, bench_now() - t0);
      t0 = bench_now();
      cudaFreeHost(h);
      line("cudaFreeHost 4 GiB", pin, bench_now() - t0);
    }
    char *p = fresh(pin, 0);
    t0 = bench_now();
    if (p && ok(cudaHostRegister(p, pin, cudaHostRegisterPortable), "cudaHostRegister 4 GiB fresh")) {
      line("cudaHostRegister 4 GiB fresh malloc", pin, bench_now() - t0);
      t0 = bench_now();
      cudaHostUnregister(p);
      line("cudaHostUnregister 4 GiB", pin, bench_now() - t0);
    }
    if (p) {
      write_all(p, pin, all, 7);
      t0 = bench_now();
      if (ok(cudaHostRegister(p, pin, cudaHostRegisterPortable), "cudaHostRegister 4 GiB warm")) {
        line("cudaHostRegister 4 GiB touched malloc", pin, bench_now() - t0);
        cudaHostUnregister(p);
      }
      free(p);
    }
  }
  /* per GPU: 1 GiB pinned and 1 GiB on the device */
  void **hp = calloc((size_t)ngpu, sizeof *hp), **dp = calloc((size_t)ngpu, sizeof *dp);
  cudaStream_t *st = calloc((size_t)ngpu, sizeof *st);
  int usable = 0;
  for (int g = 0; g < ngpu; ++g) {
    if (!ok(cudaSetDevice(g), "cudaSetDevice") || !ok(cudaMalloc(&dp[g], per), "cudaMalloc 1 GiB") ||
        !ok(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking), "stream") ||
        !ok(cudaHostAlloc(&hp[g], per, cudaHostAllocPortable), "cudaHostAlloc 1 GiB"))
      break;
    memset(hp[g], 1, per);
    cudaMemcpyAsync(dp[g], hp[g], per, cudaMemcpyHostToDevice, st[g]); /* warm-up */
    cudaStreamSynchronize(st[g]);
    usable = g + 1;
  }
  printf("GPUs: %d (%d usable for the copies)\n", ngpu, usable);
  for (int dir = 0; dir < 2; ++dir) {
    const enum cudaMemcpyKind kind = dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
    for (int g = 0; g < usable; ++g) {
      cudaSetDevice(g);
      const double t0 = bench_now();
      for (int r = 0; r < 2; ++r)
        cudaMemcpyAsync(dir ? hp[g] : dp[g], dir ? dp[g] : hp[g], per, kind, st[g]);
      cudaStreamSynchronize(st[g]);
      char what[96];
      snprintf(what, sizeof what, "pinned %s, GPU %d alone, 2 x 1 GiB", dir ? "D2H" : "H2D", g);
      line(what, 2 * per, bench_now() - t0);
    }
    if (usable > 1) {
      const double t0 = bench_now();
      for (int g = 0; g < usable; ++g) {
        cudaSetDevice(g);
        for (int r = 0; r < 2; ++r) cudaMemcpyAsync(dir ? hp[g] : dp[g], dir ? dp[g] : hp[g], per, kind, st[g]);
      }
      for (int g = 0; g < usable; ++g) { cudaSetDevice(g); cudaStreamSynchronize(st[g]); }
      char what[96];
      snprintf(what, sizeof what, "pinned %s, all %d GPUs at once, 2 x 1 GiB each (total)", dir ? "D2H" : "H2D", usable);
      line(what, 2 * per * usable, bench_now() - t0);
    }
  }
  if (usable > 1) { /* what a slab run on every GPU pays for its slots at once */
    void **h2 = calloc((size_t)usable, sizeof *h2);
    const double t0 = bench_now();
#pragma omp parallel for num_threads(usable)
    for (int g = 0; g < usable; ++g) {
      cudaSetDevice(g);
      if (cudaHostAlloc(&h2[g], per, cudaHostAllocPortable) != cudaSuccess) h2[g] = NULL;
    }
    line("cudaHostAlloc 1 GiB on every GPU's thread at once (total)", per * usable, bench_now() - t0);
    const double t1 = bench_now();
    for (int g = 0; g < usable; ++g)
      if (h2[g]) cudaFreeHost(h2[g]);
    line("cudaFreeHost of those", per * usable, bench_now() - t1);
    cudaGetLastError();
    free(h2);
  }
  /* pageable device-to-host: into fresh memory (page faults in the
   * driver's copy), then into the same memory warm; GPU 0, then all */
  {
    char *p = fresh(per, 0);
    if (p) {
      cudaSetDevice(0);
      double t0 = bench_now();
      ok(cudaMemcpy(p, dp[0], per, cudaMemcpyDeviceToHost), "pageable D2H");
      line("pageable D2H 1 GiB into fresh malloc, GPU 0", per, bench_now() - t0);
      t0 = bench_now();
      ok(cudaMemcpy(p, dp[0], per, cudaMemcpyDeviceToHost), "pageable D2H");
      line("pageable D2H 1 GiB into warm malloc, GPU 0", per, bench_now() - t0);
      t0 = bench_now();
      ok(cudaMemcpy(dp[0], p, per, cudaMemcpyHostToDevice), "pageable H2D");
      line("pageable H2D 1 GiB from warm malloc, GPU 0", per, bench_now() - t0);
      free(p);
    }
    if (usable > 1) {
      char **q = calloc((size_t)usable, sizeof *q);
      for (int g = 0; g < usable; ++g) q[g] = fresh(per, 0);
      const double t0 = bench_now();
#pragma omp parallel for num_threads(usable)
      for (int g = 0; g < usable; ++g) {
        cudaSetDevice(g);
        if (q[g]) cudaMemcpy(q[g], dp[g], per, cudaMemcpyDeviceToHost);
      }
      line("pageable D2H 1 GiB into fresh malloc, all GPUs at once (total)", per * usable, bench_now() - t0);
      for (int g = 0; g < usable; ++g) free(q[g]);
      free(q);
    }
  }
  /* pinned D2H then a many-thread copy out into fresh pageable memory:
   * the slab runs' way of returning results */
  if (usable > 0) {
    char *p = fresh(per, 0);
    cudaSetDevice(0);
    const double t0 = bench_now();
    cudaMemcpyAsync(hp[0], dp[0], per, cudaMemcpyDeviceToHost, st[0]);
    cudaStreamSynchronize(st[0]);
    const double t1 = bench_now();
    if (p) {
#pragma omp parallel num_threads(mid)
      {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const size_t a = per / nt * t, b = t == nt - 1 ? per : per / nt * (t + 1);
        memcpy(p + a, (char *)hp[0] + a, b - a);
      }
      line("pinned 1 GiB copied out into fresh malloc, 16 threads", per, bench_now() - t1);
      free(p);
    }
    line("pinned D2H then out into fresh malloc, GPU 0 (total)", per, bench_now() - t0);
  }
  for (int g = 0; g < usable; ++g) {
    cudaSetDevice(g);
    cudaFree(dp[g]);
    cudaFreeHost(hp[g]);
    cudaStreamDestroy(st[g]);
  }
  free(hp);
  free(dp);
  free(st);
  host_part(big, all, mid);
  printf("hostmem_probe done in %.1f s\n", bench_now() - t_start);
  return 0;
}
