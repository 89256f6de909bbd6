// Native test of the digests against known answers: cc digest.c digest_test.c && ./a.out
#include "digest.h"

#include <stdio.h>
#include <string.h>

static int check_sha(const char *input, size_t repeat, const char *want) {
    sha256_ctx c;
    sha256_init(&c);
    for (size_t i = 0; i < repeat; i++) sha256_update(&c, (const uint8_t *)input, strlen(input));
    uint8_t out[32];
    sha256_final(&c, out);
    char hex[65];
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", out[i]);
    if (strcmp(hex, want) != 0) {
        printf("sha256 mismatch for '%s' x%zu: %s\n", input, repeat, hex);
        return 1;
    }
    return 0;
}

int main(void) {
    int bad = 0;
    bad += check_sha("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    bad += check_sha("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    bad += check_sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
                     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    bad += check_sha("a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    uint32_t crc = crc32_update(0, (const uint8_t *)"123456789", 9);
    if (crc != 0xcbf43926u) {
        printf("crc32 mismatch: %08x\n", crc);
        bad++;
    }
    if (crc32_update(crc32_update(0, (const uint8_t *)"1234", 4), (const uint8_t *)"56789", 5) != 0xcbf43926u) {
        printf("crc32 does not stream\n");
        bad++;
    }
    printf("%d passed, %d failed\n", 6 - bad, bad);
    return bad != 0;
}
