/*
 * Benchmark anchor: repeated modular squaring with OpenSSL's
 * BN_mod_mul_montgomery, through the system libcrypto.
 *
 * The development headers are often absent, so the few prototypes used are
 * declared here (OpenSSL 1.1 / 3.x ABI; the types stay opaque) and the shared
 * library is linked by path.  Same line protocol as gmp_sqr.c:
 *
 *   start:   openssl_sqr              prints "ready openssl <OpenSSL_version(0)>"
 *   "N <hex>"                        sets the modulus (odd, > 1); prints "ok"
 *   "R <x hex> <k>"                  x^(2^k) mod N; prints "<wall ns> <cpu ns> <result hex>"
 *
 * The loop is k calls BN_mod_mul_montgomery(a, a, a) on the Montgomery form
 * (OpenSSL's own BN_mod_exp_mont squares the same way, in place); only that
 * loop is timed (wall and thread CPU time), not the conversions into and out of
 * the Montgomery domain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bignum_st BIGNUM;
typedef struct bignum_ctx BN_CTX;
typedef struct bn_mont_ctx_st BN_MONT_CTX;

BIGNUM *BN_new(void);
void BN_free(BIGNUM *a);
int BN_hex2bn(BIGNUM **a, const char *str);
char *BN_bn2hex(const BIGNUM *a);
int BN_is_odd(const BIGNUM *a);
int BN_num_bits(const BIGNUM *a);
int BN_nnmod(BIGNUM *r, const BIGNUM *m, const BIGNUM *d, BN_CTX *ctx);
BN_CTX *BN_CTX_new(void);
void BN_CTX_free(BN_CTX *c);
BN_MONT_CTX *BN_MONT_CTX_new(void);
void BN_MONT_CTX_free(BN_MONT_CTX *mont);
int BN_MONT_CTX_set(BN_MONT_CTX *mont, const BIGNUM *mod, BN_CTX *ctx);
int BN_mod_mul_montgomery(BIGNUM *r, const BIGNUM *a, const BIGNUM *b, BN_MONT_CTX *mont, BN_CTX *ctx);
int BN_to_montgomery(BIGNUM *r, const BIGNUM *a, BN_MONT_CTX *mont, BN_CTX *ctx);
int BN_from_montgomery(BIGNUM *r, const BIGNUM *a, BN_MONT_CTX *mont, BN_CTX *ctx);
void CRYPTO_free(void *ptr, const char *file, int line);
const char *OpenSSL_version(int type);

static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void fail(const char *what)
{
    printf("error %s\n", what);
    fflush(stdout);
}

int main(void)
{
    char *line = NULL;
    size_t cap = 0;
    BN_CTX *ctx = BN_CTX_new();
    BN_MONT_CTX *mont = NULL;
    BIGNUM *n = NULL, *x = NULL, *a = BN_new();

    if (ctx == NULL || a == NULL) {
        fprintf(stderr, "openssl_sqr: out of memory\n");
        return 1;
    }
    printf("ready openssl %s\n", OpenSSL_version(0));
    fflush(stdout);

    while (getline(&line, &cap, stdin) > 0) {
        char *arg = line + 2;
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == 'N' && line[1] == ' ') {
            if (mont != NULL)
                BN_MONT_CTX_free(mont);
            mont = NULL;
            if (!BN_hex2bn(&n, arg) || !BN_is_odd(n) || BN_num_bits(n) < 2) {
                fail("bad modulus");
                continue;
            }
            mont = BN_MONT_CTX_new();
            if (mont == NULL || !BN_MONT_CTX_set(mont, n, ctx)) {
                fail("BN_MONT_CTX_set failed");
                continue;
            }
            printf("ok\n");
        } else if (line[0] == 'R' && line[1] == ' ') {
            char *space = strchr(arg, ' ');
            char *hex;
            unsigned long k, i;
            long long t0, t1, c0, c1;
            int ok = 1;
            if (mont == NULL || space == NULL) {
                fail("need N first, then R <x hex> <k>");
                continue;
            }
            *space = 0;
            k = strtoul(space + 1, NULL, 10);
            if (!BN_hex2bn(&x, arg) || !BN_nnmod(x, x, n, ctx) || !BN_to_montgomery(a, x, mont, ctx)) {
                fail("bad x");
                continue;
            }
            t0 = now_ns(CLOCK_MONOTONIC);
            c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
            for (i = 0; i < k && ok; i++)
                ok = BN_mod_mul_montgomery(a, a, a, mont, ctx);
            c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
            t1 = now_ns(CLOCK_MONOTONIC);
            if (!ok || !BN_from_montgomery(x, a, mont, ctx)) {
                fail("BN_mod_mul_montgomery failed");
                continue;
            }
            hex = BN_bn2hex(x);
            printf("%lld %lld %s\n", t1 - t0, c1 - c0, hex);
            CRYPTO_free(hex, __FILE__, __LINE__);
        } else {
            fail("unknown command");
            continue;
        }
        fflush(stdout);
    }
    free(line);
    BN_free(a);
    BN_free(x);
    BN_free(n);
    if (mont != NULL)
        BN_MONT_CTX_free(mont);
    BN_CTX_free(ctx);
    return 0;
}
