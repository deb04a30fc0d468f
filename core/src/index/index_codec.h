/* Little-endian scalars of the index file (index_file.c has the layout). */
#ifndef VIC_INDEX_CODEC_H
#define VIC_INDEX_CODEC_H

#include <stdint.h>
#include <string.h>

static inline void put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static inline void put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static inline void put_f64(unsigned char *p, double v) { uint64_t u; memcpy(&u, &v, 8); put_u64(p, u); }
static inline uint32_t get_u32(const unsigned char *p) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i); return v; }
static inline uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i); return v; }
static inline double get_f64(const unsigned char *p) { uint64_t u = get_u64(p); double v; memcpy(&v, &u, 8); return v; }


#endif
