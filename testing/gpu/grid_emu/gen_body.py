# Turn kernels/src/grid.cu's device code into host C++ for grid_emu.cpp (counters added).
# usage: gen_body.py grid.cu body.inc
import re,sys
src=open(sys.argv[1]).read()
a=src.index('#define GRID_BITS')
b=src.index('/* ------------------------------------------------------------------ host */')
body=src[a:b]
body=body.replace('__global__ void __launch_bounds__(GRID_THREADS)','static void')
body=body.replace('__global__ void','static void')
body=body.replace('__device__ __forceinline__','inline')
body=body.replace('__device__','')
# counters
body=body.replace('inline float grid_dist(const grid_geom &g, float4 a, float4 b) {','static inline float grid_dist(const grid_geom &g, float4 a, float4 b) {\n  ++C_DIST;')
body=body.replace('inline int64_t lower_bound(const uint64_t *codes, int64_t n, uint64_t v) {','static inline int64_t lower_bound(const uint64_t *codes, int64_t n, uint64_t v) {\n  ++C_LB;')
body=body.replace('inline float cell_dist2(const grid_geom &g, const float u[3], const int c[3], int level) {','static inline float cell_dist2(const grid_geom &g, const float u[3], const int c[3], int level) {\n  ++C_CELL;')
body=body.replace('int m = max(abs(dx)','++C_ITER; int m = max(abs(dx)')
body=body.replace('    /* everything scanned? */','    C_R = r; C_LEVEL = level;\n    /* everything scanned? */')
open(sys.argv[2],'w').write(body)
