/* vicinity_bench: times vic_knn_build on one data file and prints one JSON
 * line per timed run (see --help).  Recall is measured against cached exact
 * lists (--truth FILE.ivecs) over all points, or else by the core's own
 * sampled estimate (vic_knn_recall). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* madvise, posix_memalign */
#endif
#include "bench_env.h"
#include "bench_query.h"
#include "bench_truth.h"
#include "vic_io.h"
#include "vicinity.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

typedef struct {
  const char *data, *name, *truth, *query, *query_truth;
  float tau;
  int max_visits, entry_points, occlusion_limit;
  vic_method method;
  vic_backend backend;
  vic_metric metric;
  int32_t k, recall_sample;
  int threads, repeats, warmup, device, devices;
  int64_t limit, budget_mib;
  const char *into; /* NULL, "int64" or "int32": vic_knn_build_into with the bench's buffers */
  double add_fraction; /* > 0: build the first rows, then time vic_knn_add of this fraction */
  int sharded;         /* vic_knn_build_sharded */
  int64_t shard_rows;
  int32_t gnnd_k_build, gnnd_samples, gnnd_iterations; /* 0: the library's defaults */
  const char *work_dir;
  const char *sample_rows, *sample_truth; /* int32 row numbers and their exact 10-NN (gnnd_truth.py) */
  int64_t batches[BENCH_MAX_BATCHES + 1]; /* --batches: public-path mode */
  float taus[BENCH_MAX_TAUS];
  int ntaus;
} bench_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: vicinity_bench --data FILE [options]\n"
          "  --data FILE        .npy, .fvecs, IDX (MNIST, .gz ok), Gadget 1 or .csv\n"
          "  --name NAME        data set name in the output (default: file name)\n"
          "  --limit N          use the first N rows only\n"
          "  --method M         auto|brute|grid|nndescent|ggnn|gnnd|grnnd|tsdg (default auto)\n"
          "  --backend B        auto|cpu|cuda (default auto)\n"
          "  --metric M         l2|cosine|ip (default l2)\n"
          "  --k K              neighbours per point (default 16)\n"
          "  --threads T        CPU threads, 0 = all (default 0)\n"
          "  --repeats R        timed runs, one JSON line each (default 1)\n"
          "  --warmup W         untimed runs first (default 0; query mode: also one untimed index build)\n"
          "  --truth FILE       exact lists cache (.ivecs): loaded, or computed and saved\n"
          "  --recall-sample S  without --truth: points in the core's sampled recall (default 1000, 0 = none)\n"
          "  --device D         CUDA device (default 0)\n"
          "  --devices N        GPUs from --device on (default 1; -1 = all)\n"
          "  --budget-mib M     device memory budget per GPU in MiB (default 0 = what is free)\n"
          "  --into T           int64|int32: lists into the bench's own fresh buffers (vic_knn_build_into)\n"
          "  --add-fraction F   build the graph of the first (1-F) n rows (untimed), then time vic_knn_add of the rest\n"
          "  --sharded 1        vic_knn_build_sharded: shards sized to --budget-mib (or --shard-rows N)\n"
          "  --shard-rows N     rows per shard of --sharded (default 0 = from the budget)\n"
          "  --work-dir DIR     --sharded keeps the shards' graphs in a memory-mapped file there\n"
          "  --gnnd-k-build K, --gnnd-samples P, --gnnd-iterations I: vic_build_options.gnnd (0 = default)\n"
          "  --sample-rows F    raw int32 row numbers of a sample (testing/gpu/gnnd_truth.py's sample.i32) ...\n"
          "  --sample-truth F   ... and their exact 10-NN (truth.i32): recall@10 on that sample\n"
          "Query mode (vic_index_build once, then vic_index_search; reports QPS):\n"
          "  --query FILE       query rows (same d as the data)\n"
          "  --query-truth FILE exact lists of the queries (.ivecs): loaded, or computed and saved\n"
          "  --tau T            search slack (default 0.5)\n"
          "  --max-visits V     visit budget per query (default 0 = automatic)\n"
          "  --entry-points E   random entry points per query (default 0 = automatic)\n"
          "  --occlusion-limit L  TSDG: edges searched per node by occlusion order (default 0 = automatic)\n"
          "  --batches LIST     public-path mode: batch sizes, e.g. 1,10,100,10000: per size and tau one JSON\n"
          "                     line, wall and kernel time per call and per query, recall, first call after build\n"
          "  --taus LIST        taus of the public-path mode, e.g. 0.1,0.2 (default: --tau)\n"
          "Build time excludes the core's own recall estimate (recall_sample = 0 in the build).\n");
}

static int parse_args(int argc, char **argv, bench_args *a) {
  memset(a, 0, sizeof *a);
  a->k = 16;
  a->repeats = 1;
  a->recall_sample = 1000;
  a->tau = 0.5f;
  for (int i = 1; i < argc; ++i) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) { usage(stdout); exit(0); }
    if (i + 1 >= argc) { fprintf(stderr, "vicinity_bench: %s needs a value\n", o); return -1; }
    const char *v = argv[++i];
    char *end = NULL;
    long long num = strtoll(v, &end, 10);
    int is_num = end && *end == '\0';
    if (!strcmp(o, "--data")) a->data = v;
    else if (!strcmp(o, "--name")) a->name = v;
    else if (!strcmp(o, "--truth")) a->truth = v;
    else if (!strcmp(o, "--query")) a->query = v;
    else if (!strcmp(o, "--query-truth")) a->query_truth = v;
    else if (!strcmp(o, "--tau")) { a->tau = strtof(v, &end); if (*end || !(a->tau >= 0)) goto bad; }
    else if (!strcmp(o, "--method")) { if (vic_method_parse(v, &a->method) != VIC_OK) goto bad; }
    else if (!strcmp(o, "--backend")) { if (vic_backend_parse(v, &a->backend) != VIC_OK) goto bad; }
    else if (!strcmp(o, "--metric")) { if (vic_metric_parse(v, &a->metric) != VIC_OK) goto bad; }
    else if (!strcmp(o, "--batches") || !strcmp(o, "--taus")) {
      const int taus = !strcmp(o, "--taus");
      const int cap = taus ? BENCH_MAX_TAUS : BENCH_MAX_BATCHES;
      int n = 0;
      const char *p = v;
      while (*p) {
        char *e = NULL;
        double x = strtod(p, &e);
        if (e == p || n >= cap || !(x >= 0) || (!taus && (x < 1 || x != (double)(int64_t)x))) goto bad;
        if (taus) a->taus[n++] = (float)x;
        else a->batches[n++] = (int64_t)x;
        p = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') goto bad;
      }
      if (taus) a->ntaus = n;
      else a->batches[n] = 0;
    }
    else if (!strcmp(o, "--into")) { if (strcmp(v, "int64") && strcmp(v, "int32")) goto bad; a->into = v; }
    else if (!strcmp(o, "--add-fraction")) {
      a->add_fraction = strtod(v, &end);
      if (*end || !(a->add_fraction > 0 && a->add_fraction < 1)) goto bad;
    }
    else if (!strcmp(o, "--work-dir")) a->work_dir = v;
    else if (!strcmp(o, "--sample-rows")) a->sample_rows = v;
    else if (!strcmp(o, "--sample-truth")) a->sample_truth = v;
    else if (!is_num) goto bad;
    else if (!strcmp(o, "--k") && num > 0 && num < (1 << 20)) a->k = (int32_t)num;
    else if (!strcmp(o, "--threads") && num >= 0) a->threads = (int)num;
    else if (!strcmp(o, "--repeats") && num > 0) a->repeats = (int)num;
    else if (!strcmp(o, "--warmup") && num >= 0) a->warmup = (int)num;
    else if (!strcmp(o, "--recall-sample") && num >= 0 && num <= INT32_MAX) a->recall_sample = (int32_t)num;
    else if (!strcmp(o, "--device") && num >= 0) a->device = (int)num;
    else if (!strcmp(o, "--devices") && (num >= 1 || num == -1) && num <= 1024) a->devices = (int)num;
    else if (!strcmp(o, "--budget-mib") && num >= 0) a->budget_mib = num;
    else if (!strcmp(o, "--limit") && num > 1) a->limit = num;
    else if (!strcmp(o, "--sharded") && (num == 0 || num == 1)) a->sharded = (int)num;
    else if (!strcmp(o, "--shard-rows") && num >= 0) a->shard_rows = num;
    else if (!strcmp(o, "--gnnd-k-build") && num >= 0 && num <= 256) a->gnnd_k_build = (int32_t)num;
    else if (!strcmp(o, "--gnnd-samples") && num >= 0 && num <= 32) a->gnnd_samples = (int32_t)num;
    else if (!strcmp(o, "--gnnd-iterations") && num >= 0 && num <= 1000) a->gnnd_iterations = (int32_t)num;
    else if (!strcmp(o, "--max-visits") && num >= 0 && num <= INT32_MAX) a->max_visits = (int)num;
    else if (!strcmp(o, "--entry-points") && num >= 0 && num <= INT32_MAX) a->entry_points = (int)num;
    else if (!strcmp(o, "--occlusion-limit") && num >= 0 && num <= INT32_MAX) a->occlusion_limit = (int)num;
    else goto bad;
    continue;
  bad:
    fprintf(stderr, "vicinity_bench: bad option %s %s (see --help)\n", o, v);
    return -1;
  }
  if (!a->data) { fprintf(stderr, "vicinity_bench: --data is required\n"); return -1; }
  return 0;
}

/* The file name without folders and extensions: "uniform3_1000000". */
static void default_name(const char *path, char *buf, size_t size) {
  const char *b = strrchr(path, '/');
  snprintf(buf, size, "%s", b ? b + 1 : path);
  char *dot = strchr(buf, '.');
  if (dot && dot != buf) *dot = '\0';
}

static void print_line(const bench_args *a, const char *name, const char *machine, const vic_data *x,
                       const vic_knn *nn, double seconds, double cpu_seconds, double recall,
                       int64_t recall_points) {
  char card[256] = "", date[32];
  if (nn->report.backend == VIC_BACKEND_CUDA) bench_card(a->device, card, sizeof card);
  bench_date(date, sizeof date);
  printf("{\"dataset\":");
  bench_json_str(stdout, name);
  printf(",\"n\":%lld,\"d\":%d,\"k\":%d,\"method\":", (long long)x->n, x->d, nn->k);
  bench_json_str(stdout, vic_method_name(nn->report.method));
  printf(",\"backend\":");
  bench_json_str(stdout, vic_backend_name(nn->report.backend));
  printf(",\"threads\":%d,\"devices\":%d,\"budget_mib\":%lld,\"lists\":\"%s\",\"machine\":",
         a->threads ? a->threads : omp_get_max_threads(), a->devices ? a->devices : 1, (long long)a->budget_mib,
         a->into ? a->into : "library");
  bench_json_str(stdout, machine);
  printf(",\"card\":");
  if (card[0]) bench_json_str(stdout, card);
  else printf("null");
  if (a->gnnd_k_build || a->gnnd_samples || a->gnnd_iterations)
    printf(",\"gnnd_options\":\"k_build %d samples %d iterations %d\"", (int)a->gnnd_k_build, (int)a->gnnd_samples,
           (int)a->gnnd_iterations);
  printf(",\"seconds\":%.6f,\"cpu_seconds\":%.3f,\"seconds_stages\":{", seconds, cpu_seconds);
  for (int s = 0; s < nn->report.n_stages; ++s) {
    if (s) printf(",");
    bench_json_str(stdout, nn->report.stages[s].name);
    printf(":%.6f", nn->report.stages[s].seconds);
  }
  if (nn->report.backend == VIC_BACKEND_CUDA)
    printf("%s\"transfer\":%.6f,\"kernel\":%.6f", nn->report.n_stages ? "," : "", nn->report.seconds_transfer,
           nn->report.seconds_kernel);
  printf("},\"recall\":");
  if (recall >= 0) printf("%.6f", recall);
  else printf("null");
  printf(",\"recall_sample\":%lld,\"peak_rss_mb\":%.1f", (long long)recall_points, bench_peak_rss_mb());
  if (nn->report.device_peak_bytes > 0) printf(",\"device_peak_mib\":%.1f", nn->report.device_peak_bytes / 1048576.0);
  printf(",\"date\":");
  bench_json_str(stdout, date);
  if (a->add_fraction > 0) printf(",\"mode\":\"add\",\"add_fraction\":%.4f", a->add_fraction);
  else if (a->sharded) printf(",\"mode\":\"sharded\",\"shards\":%d", nn->report.slabs);
  printf(",\"tool\":\"vicinity\",\"reason\":");
  bench_json_str(stdout, nn->report.reason);
  printf("}\n");
  fflush(stdout);
}

/* A whole raw int32 file; *count its values. */
static int32_t *read_i32(const char *path, int64_t *count) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  int32_t *v = malloc(bytes > 0 ? (size_t)bytes : 1);
  *count = bytes / 4;
  if (v && fread(v, 4, (size_t)*count, f) != (size_t)*count) { free(v); v = NULL; }
  fclose(f);
  return v;
}

/* recall@10 of nn on the sample rows against their exact 10-NN. */
static double sample_recall(const vic_knn *nn, const int32_t *rows, const int32_t *truth, int64_t count) {
  int64_t hit = 0;
  const int32_t k = nn->k < 10 ? nn->k : 10;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t *l = nn->ids + (int64_t)rows[i] * nn->k;
    for (int32_t t = 0; t < k; ++t)
      for (int e = 0; e < 10; ++e) hit += l[t] == truth[i * 10 + e];
  }
  return (double)hit / (10.0 * (double)count);
}

/* --into: fresh buffers of the bench (timed with the call, as the
 * library's own allocation is in vic_knn_build), filled by
 * vic_knn_build_into; nn views them (ids NULL for int32, kept in nn32). */
static void *nn32;

/* The bench's buffers as a user who writes gigabytes of fresh lists would
 * ask for them: in huge pages where the system gives them (Linux). */
static void *lists_alloc(size_t bytes) {
#ifdef __linux__
  const size_t huge = (size_t)2 << 20;
  void *p = NULL;
  if (bytes >= 8 * huge) {
    if (posix_memalign(&p, huge, bytes) != 0) return NULL;
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }
#endif
  return malloc(bytes);
}

static vic_status build_into(vic_ctx *c, const vic_data *x, const vic_build_options *o, const char *type, vic_knn *nn) {
  memset(nn, 0, sizeof *nn);
  const int32_t k = (int64_t)o->k < x->n ? o->k : (int32_t)(x->n - 1);
  const size_t entries = (size_t)x->n * (size_t)k;
  vic_knn_out out;
  vic_knn_out_init(&out);
  out.id_type = strcmp(type, "int32") ? VIC_IDS_INT64 : VIC_IDS_INT32;
  out.ids = lists_alloc(entries * (out.id_type == VIC_IDS_INT32 ? 4 : 8));
  out.dist = lists_alloc(entries * sizeof(float));
  out.capacity = (int64_t)entries;
  if (!out.ids || !out.dist) {
    free(out.ids);
    free(out.dist);
    fprintf(stderr, "vicinity_bench: no host memory for the lists\n");
    return VIC_E_NOMEM;
  }
  vic_status s = vic_knn_build_into(c, x, o, &out);
  if (s != VIC_OK) {
    free(out.ids);
    free(out.dist);
    return s;
  }
  nn->n = out.n;
  nn->k = out.k;
  nn->dist = out.dist;
  nn->report = out.report;
  if (out.id_type == VIC_IDS_INT64) nn->ids = out.ids;
  else nn32 = out.ids;
  return VIC_OK;
}

int main(int argc, char **argv) {
  bench_args a;
  if (parse_args(argc, argv, &a) != 0) return 2;
  char err[1024], name[256], machine[512];
  vio_matrix m;
  if (vio_load(a.data, &m, err, sizeof err) != 0) { fprintf(stderr, "vicinity_bench: %s\n", err); return 1; }
  if (a.limit && a.limit < m.n) m.n = a.limit;
  if (a.name) snprintf(name, sizeof name, "%s", a.name);
  else default_name(a.data, name, sizeof name);
  bench_machine(machine, sizeof machine);

  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = a.backend;
  co.threads = a.threads;
  co.device = a.device;
  co.devices = a.devices;
  vic_ctx *c;
  vic_status s = vic_ctx_create(&co, &c);
  if (s != VIC_OK) { fprintf(stderr, "vicinity_bench: context: %s\n", vic_status_name(s)); vio_free(&m); return 1; }
  vic_data x = {m.rows, m.n, m.d, 0, a.metric, NULL, NULL};
  vio_imatrix truth = {0};
  int rc = 0;
  if (a.truth && bench_truth(c, &x, a.k, a.truth, &truth, err, sizeof err) != 0) {
    fprintf(stderr, "vicinity_bench: %s\n", err);
    rc = 1;
    goto done;
  }
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = a.method;
  o.k = a.k;
  o.recall_sample = 0; /* timed separately below, outside the build time */
  o.device_memory_budget = (size_t)a.budget_mib << 20;
  if (a.gnnd_k_build) o.gnnd.k_build = a.gnnd_k_build;
  if (a.gnnd_samples) o.gnnd.samples = a.gnnd_samples;
  if (a.gnnd_iterations) o.gnnd.iterations = a.gnnd_iterations;
  if (a.query) {
    bench_query_args qa;
    memset(&qa, 0, sizeof qa);
    qa.name = name;
    qa.machine = machine;
    qa.query_path = a.query;
    qa.truth_path = a.query_truth;
    qa.threads = a.threads ? a.threads : omp_get_max_threads();
    qa.repeats = a.repeats;
    qa.warmup = a.warmup;
    qa.device = a.device;
    vic_search_options_init(&qa.search);
    qa.search.k = a.k;
    qa.search.tau = a.tau;
    qa.search.max_visits = a.max_visits;
    qa.search.entry_points = a.entry_points;
    qa.search.occlusion_limit = a.occlusion_limit;
    memcpy(qa.batches, a.batches, sizeof qa.batches);
    memcpy(qa.taus, a.taus, sizeof qa.taus);
    qa.ntaus = a.ntaus;
    rc = bench_query(c, &x, &o, &qa);
    goto done;
  }
  for (int run = 0; run < a.warmup + a.repeats; ++run) {
    vic_knn nn;
    double t0 = bench_now(), cpu0 = bench_cpu_seconds();
    if (a.add_fraction > 0) {
      /* the graph of the first rows is built untimed; vic_knn_add is timed */
      const int64_t n_old = x.n - (int64_t)(a.add_fraction * (double)x.n);
      vic_data xo = x, xn = x;
      xo.n = n_old;
      xn.rows = x.rows + n_old * x.d;
      xn.n = x.n - n_old;
      vic_knn g;
      s = vic_knn_build(c, &xo, &o, &g);
      if (s == VIC_OK) {
        fprintf(stderr, "vicinity_bench: graph of the first %lld rows in %.3f s\n", (long long)n_old,
                g.report.seconds_total);
        t0 = bench_now();
        cpu0 = bench_cpu_seconds();
        s = vic_knn_add(c, &xo, &g, &xn, &o, &nn);
        vic_knn_free(&g);
      }
    } else if (a.sharded) {
      vic_shard_options so;
      vic_shard_options_init(&so);
      so.shard_rows = a.shard_rows;
      so.work_dir = a.work_dir;
      s = vic_knn_build_sharded(c, &x, &o, &so, &nn);
    } else if (a.into) s = build_into(c, &x, &o, a.into, &nn);
    else s = vic_knn_build(c, &x, &o, &nn);
    double seconds = bench_now() - t0, cpu_seconds = bench_cpu_seconds() - cpu0;
    if (s != VIC_OK) {
      fprintf(stderr, "vicinity_bench: %s: %s: %s\n",
              a.add_fraction > 0 ? "vic_knn_add" : a.sharded ? "vic_knn_build_sharded" : "vic_knn_build",
              vic_status_name(s), vic_ctx_error(c));
      rc = 1;
      goto done;
    }
    if (run >= a.warmup) {
      double recall = -1;
      int64_t points = 0;
      if (!nn.ids) {
        /* int32 lists: no int64 view for the recall helpers */
      } else if (a.sample_rows && a.sample_truth) {
        int64_t ns = 0, nt = 0;
        int32_t *sr = read_i32(a.sample_rows, &ns), *st = read_i32(a.sample_truth, &nt);
        if (!sr || !st || nt != ns * 10) {
          fprintf(stderr, "vicinity_bench: cannot read the sample truth (%s, %s)\n", a.sample_rows, a.sample_truth);
        } else {
          recall = sample_recall(&nn, sr, st, ns);
          points = ns;
        }
        free(sr);
        free(st);
      } else if (truth.rows) {
        recall = bench_recall(&x, &nn, &truth);
        points = x.n;
      } else if (a.recall_sample > 0) {
        s = vic_knn_recall(c, &x, &nn, a.recall_sample, &recall);
        if (s != VIC_OK) fprintf(stderr, "vicinity_bench: recall: %s\n", vic_ctx_error(c)), recall = -1;
        else points = a.recall_sample < x.n ? a.recall_sample : x.n;
      }
      print_line(&a, name, machine, &x, &nn, seconds, cpu_seconds, recall, points);
    }
    if (a.into) {
      free(nn.ids ? (void *)nn.ids : nn32);
      free(nn.dist);
      nn32 = NULL;
      memset(&nn, 0, sizeof nn);
    } else {
      vic_knn_free(&nn);
    }
  }
done:
  vio_ifree(&truth);
  vic_ctx_destroy(c);
  vio_free(&m);
  return rc;
}
