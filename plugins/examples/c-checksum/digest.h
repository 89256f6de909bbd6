// SHA-256 (FIPS 180-4) and CRC-32 (IEEE 802.3, as zlib and `cksum -a crc32b` compute it),
// streaming: init, update with any number of chunks, final.
#ifndef CHECKSUM_DIGEST_H
#define CHECKSUM_DIGEST_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[8];
    uint64_t length;
    uint8_t block[64];
    size_t used;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const uint8_t *data, size_t len);
void sha256_final(sha256_ctx *c, uint8_t out[32]);

uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t len);

#endif
