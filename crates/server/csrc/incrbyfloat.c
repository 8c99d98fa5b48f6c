/* INCRBYFLOAT in C's `long double`, exactly as Redis computes it (see
 * src/incrbyfloat.rs for why this is C). The parsing follows Redis's
 * string2ld and the formatting its ld2string in LD_STR_HUMAN mode. */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

/* Redis's MAX_LONG_DOUBLE_CHARS: the longest text parsed or produced. */
#define MAX_CHARS (5 * 1024)

static int parse(const char *s, size_t len, long double *out) {
    char buf[MAX_CHARS];
    char *end;
    long double v;
    if (len == 0 || len >= sizeof(buf)) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || end[0] != '\0' || (size_t)(end - buf) != len ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        errno == EINVAL || isnan(v))
        return 0;
    *out = v;
    return 1;
}

/* Adds `by` to `cur` (absent: `cur == NULL`, counts as 0) and writes the
 * sum's text to `out` (at least MAX_CHARS bytes). Returns its length, or
 * -1 if `cur` is not a float, -2 if `by` is not, -3 if the sum is NaN or
 * infinite. */
long slsm_incrbyfloat(const char *cur, size_t cur_len, const char *by, size_t by_len, char *out) {
    long double value = 0, incr;
    int len;
    if (cur != NULL && !parse(cur, cur_len, &value)) return -1;
    if (!parse(by, by_len, &incr)) return -2;
    value += incr;
    if (isnan(value) || isinf(value)) return -3;
    len = snprintf(out, MAX_CHARS, "%.17Lf", value);
    if (len < 0 || len + 1 > MAX_CHARS) return -3;
    if (strchr(out, '.') != NULL) {
        char *p = out + len - 1;
        while (*p == '0') {
            p--;
            len--;
        }
        if (*p == '.') len--;
    }
    if (len == 2 && out[0] == '-' && out[1] == '0') {
        out[0] = '0';
        len = 1;
    }
    return len;
}
