/*
 * Benchmark anchor: repeated modular squaring with GMP (mpz layer).
 *
 * Built by `modforge bench vdf` against a GMP configured for this machine
 * (see docs/benchmarks.md); never part of the package.  It speaks a line
 * protocol on stdin/stdout so one warm process serves every width and repeat:
 *
 *   start:   gmp_sqr powm|mulmod     prints "ready gmp <version> <cc> <cflags>"
 *   "N <hex>"                        sets the modulus (odd, > 1); prints "ok"
 *   "R <x hex> <k>"                  x^(2^k) mod N; prints "<wall ns> <cpu ns> <result hex>"
 *
 * powm:   one mpz_powm(r, x, 2^k, N) call: GMP's fastest path for k squarings
 *         (Montgomery form, mpn_sqr + REDC per step; the window table for a
 *         one-bit exponent costs a handful of multiplications).
 * mulmod: k iterations of mpz_mul(r, r, r) + mpz_mod(r, r, N) (the LCS35 solver
 *         loop: schoolbook division instead of Montgomery).
 * Only the arithmetic is timed, not parsing or printing: wall time (CLOCK_MONOTONIC)
 * and this thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which a busy machine's
 * other processes do not inflate).
 */
#include <stdio.h> /* before gmp.h, which then declares mpz_out_str */
#include <gmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int main(int argc, char **argv)
{
    int powm;
    char *line = NULL;
    size_t cap = 0;
    mpz_t n, x, r, e;
    int have_n = 0;

    if (argc != 2 || (strcmp(argv[1], "powm") != 0 && strcmp(argv[1], "mulmod") != 0)) {
        fprintf(stderr, "usage: %s powm|mulmod  (then N <hex> / R <x hex> <k> lines on stdin)\n", argv[0]);
        return 2;
    }
    powm = strcmp(argv[1], "powm") == 0;
    mpz_inits(n, x, r, e, NULL);
    printf("ready gmp %s cc=%s cflags=%s\n", gmp_version, __GMP_CC, __GMP_CFLAGS);
    fflush(stdout);

    while (getline(&line, &cap, stdin) > 0) {
        char *arg = line + 2;
        line[strcspn(line, "\r\n")] = 0;
        if (line[0] == 'N' && line[1] == ' ') {
            if (mpz_set_str(n, arg, 16) != 0 || mpz_cmp_ui(n, 1) <= 0 || mpz_even_p(n)) {
                fail("bad modulus");
                continue;
            }
            have_n = 1;
            printf("ok\n");
        } else if (line[0] == 'R' && line[1] == ' ') {
            char *space = strchr(arg, ' ');
            unsigned long k, i;
            long long t0, t1, c0, c1;
            if (!have_n || space == NULL) {
                fail("need N first, then R <x hex> <k>");
                continue;
            }
            *space = 0;
            k = strtoul(space + 1, NULL, 10);
            if (mpz_set_str(x, arg, 16) != 0) {
                fail("bad x");
                continue;
            }
            mpz_mod(x, x, n);
            if (powm) {
                mpz_set_ui(e, 0);
                mpz_setbit(e, k);
                t0 = now_ns(CLOCK_MONOTONIC);
                c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                mpz_powm(r, x, e, n);
                c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                t1 = now_ns(CLOCK_MONOTONIC);
            } else {
                mpz_set(r, x);
                t0 = now_ns(CLOCK_MONOTONIC);
                c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                for (i = 0; i < k; i++) {
                    mpz_mul(r, r, r);
                    mpz_mod(r, r, n);
                }
                c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
                t1 = now_ns(CLOCK_MONOTONIC);
            }
            printf("%lld %lld ", t1 - t0, c1 - c0);
            mpz_out_str(stdout, 16, r);
            printf("\n");
        } else {
            fail("unknown command");
            continue;
        }
        fflush(stdout);
    }
    free(line);
    mpz_clears(n, x, r, e, NULL);
    return 0;
}
