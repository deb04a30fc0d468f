/* The sections of an index file: a 16-byte head (id, bytes) and the bytes,
 * hashed into the payload checksum as they are written or read, so a
 * section is never copied to be checked.  Each index kind's ops write and
 * read their own sections through these (index_kinds.c). */
#include "hash64.h"
#include "index_codec.h"
#include "index_internal.h"

void vic__index_write_section(vic_index_writer *w, uint32_t id, const void *data, uint64_t bytes) {
  unsigned char head[16] = {0};
  put_u32(head, id);
  put_u64(head + 8, bytes);
  w->checksum = vic__hash_bytes(w->checksum, head, 16);
  w->checksum = vic__hash_word(w->checksum, vic__hash_bytes(VIC_HASH_SEED, data, (size_t)bytes));
  if (fwrite(head, 1, 16, w->f) != 16 || (bytes && fwrite(data, 1, (size_t)bytes, w->f) != bytes)) w->failed = 1;
  w->bytes += 16 + bytes;
  w->sections++;
}

vic_status vic__index_read_section(vic_ctx *c, vic_index_reader *r, uint32_t id, uint64_t bytes, void **out,
                                   uint64_t *got) {
  unsigned char head[16];
  *out = NULL;
  if (r->left < 16 || fread(head, 1, 16, r->f) != 16)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is truncated: section %u is missing", r->path, id);
  r->left -= 16;
  uint32_t fid = get_u32(head);
  uint64_t fb = get_u64(head + 8);
  if (fid != id) return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: expected section %u, found %u", r->path, id, fid);
  if ((bytes != UINT64_MAX && fb != bytes) || fb > r->left)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: section %u has %llu bytes, expected %llu (%llu left in the file)",
                     r->path, id, (unsigned long long)fb, (unsigned long long)(bytes == UINT64_MAX ? fb : bytes),
                     (unsigned long long)r->left);
  void *buf = vic__malloc(c, fb ? (size_t)fb : 1, "index section");
  if (!buf) return VIC_E_NOMEM;
  if (fb && fread(buf, 1, (size_t)fb, r->f) != fb) {
    free(buf);
    return vic__fail(c, VIC_E_FORMAT, "'%s' is truncated inside section %u", r->path, id);
  }
  r->left -= fb;
  r->checksum = vic__hash_bytes(r->checksum, head, 16);
  r->checksum = vic__hash_word(r->checksum, vic__hash_bytes(VIC_HASH_SEED, buf, (size_t)fb));
  *out = buf;
  if (got) *got = fb;
  return VIC_OK;
}
