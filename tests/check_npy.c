/*
** check_npy.c - Check tests for runtime/npy.c.
**
** Files "written by numpy" are crafted byte for byte here: the header
** literals below were produced by numpy 1.24 (np.save / format.write_array),
** and mk_npy() reproduces numpy's _wrap_header padding for other dicts.
*/
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include <check.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "npy.h"

/* Exact headers written by numpy 1.24. */
static const char NP_F8_2x3_F[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': True, 'shape': ("
    "2, 3), }                                                           \x0a";
static const char NP_F8_2x3_C[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': "
    "(2, 3), }                                                          \x0a";
static const char NP_F4_3_V2[] =
    "\x93NUMPY\x02\x00t\x00\x00\x00{'descr': '<f4', 'fortran_order': False, '"
    "shape': (3,), }                                                         "
    " \x0a";
static const char NP_F8_0D[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': "
    "(), }                                                              \x0a";
static const char NP_B1_3x0x2[] =
    "\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape': "
    "(3, 0, 2), }                                                       \x0a";
#define NP_HDR_LEN 128

static char g_dir[64];

/* Full path of NAME inside the temp dir (4 rotating buffers). */
static const char *tpath(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static void put_file(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(tpath(name), "wb");
    ck_assert_msg(f != NULL, "cannot create %s", name);
    ck_assert(len == 0 || fwrite(data, 1, len, f) == len);
    ck_assert(fclose(f) == 0);
}

/* Reads NAME into BUF; returns its size (fails the test if it exceeds CAP). */
static size_t get_file(const char *name, unsigned char *buf, size_t cap)
{
    FILE *f = fopen(tpath(name), "rb");
    size_t n;
    ck_assert_msg(f != NULL, "cannot open %s", name);
    n = fread(buf, 1, cap, f);
    ck_assert(fgetc(f) == EOF);
    fclose(f);
    return n;
}

static int file_exists(const char *name)
{
    struct stat st;
    return stat(tpath(name), &st) == 0;
}

/*
** Builds a .npy image like numpy's _wrap_header: DICT (with any growth
** spaces already in it), spaces, '\n', 64-byte alignment. Returns its size.
*/
static size_t mk_npy(unsigned char *out, size_t cap, int major, const char *dict,
                     const void *data, size_t dlen)
{
    size_t pre = major == 1 ? 10 : 12, dl = strlen(dict), hl = dl + 1;
    size_t pad = 64 - (pre + hl) % 64, total = pre + hl + pad + dlen, field = hl + pad;

    ck_assert(total <= cap);
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    out[8] = (unsigned char)(field & 0xff);
    out[9] = (unsigned char)(field >> 8);
    if (major != 1) {
        out[10] = (unsigned char)(field >> 16);
        out[11] = (unsigned char)(field >> 24);
    }
    memcpy(out + pre, dict, dl);
    memset(out + pre + dl, ' ', pad);
    out[pre + dl + pad] = '\n';
    if (dlen) memcpy(out + pre + hl + pad, data, dlen);
    return total;
}

static void put_npy(const char *name, int major, const char *dict, const void *data, size_t dlen)
{
    static unsigned char buf[8192];
    put_file(name, buf, mk_npy(buf, sizeof buf, major, dict, data, dlen));
}

/* Header literal + data. */
static void put_hdr(const char *name, const char *hdr, const void *data, size_t dlen)
{
    unsigned char buf[1024];
    ck_assert(NP_HDR_LEN + dlen <= sizeof buf);
    memcpy(buf, hdr, NP_HDR_LEN);
    if (dlen) memcpy(buf + NP_HDR_LEN, data, dlen);
    put_file(name, buf, NP_HDR_LEN + dlen);
}

static void read_ok(const char *name, npy_array *a)
{
    char err[512];
    int rc = npy_read(tpath(name), a, 1, err, sizeof err);
    ck_assert_msg(rc == 0, "%s: npy_read failed: %s", name, err);
    ck_assert_ptr_nonnull(a->data);
}

/* npy_read must fail with -1, data NULL, and a one-line message naming the file containing PHRASE. */
static void read_fails(const char *name, const char *phrase)
{
    npy_array a;
    char err[512];
    int rc;

    memset(&a, 0x5a, sizeof a);
    rc = npy_read(tpath(name), &a, 0, err, sizeof err);
    ck_assert_msg(rc == -1, "%s: expected failure, got %d", name, rc);
    ck_assert_ptr_null(a.data);
    ck_assert_msg(strstr(err, phrase) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err, phrase);
    ck_assert_msg(strncmp(err, tpath(name), strlen(tpath(name))) == 0, "message \"%s\" does not name the file", err);
    ck_assert_msg(strchr(err, '\n') == NULL, "message \"%s\" is not one line", err);
}

static void dict_fails(const char *name, const char *dict, const char *phrase)
{
    put_npy(name, 1, dict, NULL, 0);
    read_fails(name, phrase);
}

/* ------------------------------------------------------------------ round trips */

START_TEST(rt_f32_1d)
{
    const float v[5] = { 1.5f, -2.25f, 0.0f, 3.4e38f, -1e-45f };
    const int64_t shape[1] = { 5 };
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("f32.npy"), NPY_F32, 1, shape, v, err, sizeof err), 0);
    read_ok("f32.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_F32);
    ck_assert_int_eq(a.ndim, 1);
    ck_assert_int_eq(a.shape[0], 5);
    ck_assert_int_eq(a.nelem, 5);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);
    ck_assert_ptr_null(a.data);
}
END_TEST

START_TEST(rt_f64_3d)
{
    double v[2][3][4];
    const int64_t shape[3] = { 2, 3, 4 };
    npy_array a;
    char err[256];
    int i, j, k;

    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++) v[i][j][k] = 100 * i + 10 * j + k + 0.5;
    ck_assert_int_eq(npy_write(tpath("f64.npy"), NPY_F64, 3, shape, v, err, sizeof err), 0);
    read_ok("f64.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_F64);
    ck_assert_int_eq(a.ndim, 3);
    ck_assert(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
    ck_assert_int_eq(a.nelem, 24);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);
}
END_TEST

START_TEST(rt_bool)
{
    const unsigned char v[6] = { 0, 1, 7, 0, 255, 1 }, want[6] = { 0, 1, 1, 0, 1, 1 };
    const int64_t shape[2] = { 2, 3 };
    unsigned char raw[256];
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("b.npy"), NPY_BOOL, 2, shape, v, err, sizeof err), 0);
    ck_assert_int_eq(get_file("b.npy", raw, sizeof raw), NP_HDR_LEN + 6);
    ck_assert(memcmp(raw + NP_HDR_LEN, want, 6) == 0);      /* normalised on write */
    read_ok("b.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_BOOL);
    ck_assert_int_eq(a.nelem, 6);
    ck_assert(memcmp(a.data, want, 6) == 0);
    npy_free(&a);
}
END_TEST

START_TEST(rt_0d)
{
    const double v = 2.5;
    unsigned char raw[256];
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("s.npy"), NPY_F64, 0, NULL, &v, err, sizeof err), 0);
    ck_assert_int_eq(get_file("s.npy", raw, sizeof raw), NP_HDR_LEN + 8);
    ck_assert(memcmp(raw, NP_F8_0D, NP_HDR_LEN) == 0);
    read_ok("s.npy", &a);
    ck_assert_int_eq(a.ndim, 0);
    ck_assert_int_eq(a.nelem, 1);
    ck_assert(*(double *)a.data == 2.5);
    npy_free(&a);
}
END_TEST

START_TEST(rt_zero_size)
{
    const int64_t s3[3] = { 3, 0, 2 }, s1[1] = { 0 };
    unsigned char raw[256];
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("z.npy"), NPY_BOOL, 3, s3, NULL, err, sizeof err), 0);
    ck_assert_int_eq(get_file("z.npy", raw, sizeof raw), NP_HDR_LEN);
    ck_assert(memcmp(raw, NP_B1_3x0x2, NP_HDR_LEN) == 0);
    read_ok("z.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_BOOL);
    ck_assert_int_eq(a.ndim, 3);
    ck_assert(a.shape[0] == 3 && a.shape[1] == 0 && a.shape[2] == 2);
    ck_assert_int_eq(a.nelem, 0);
    npy_free(&a);

    ck_assert_int_eq(npy_write(tpath("z1.npy"), NPY_F32, 1, s1, NULL, err, sizeof err), 0);
    read_ok("z1.npy", &a);
    ck_assert_int_eq(a.ndim, 1);
    ck_assert_int_eq(a.shape[0], 0);
    ck_assert_int_eq(a.nelem, 0);
    npy_free(&a);
}
END_TEST

START_TEST(write_matches_numpy)
{
    const double v[6] = { 0, 1, 2, 3, 4, 5 };
    const int64_t shape[2] = { 2, 3 };
    unsigned char raw[512];
    char err[256];

    ck_assert_int_eq(npy_write(tpath("np.npy"), NPY_F64, 2, shape, v, err, sizeof err), 0);
    ck_assert_int_eq(get_file("np.npy", raw, sizeof raw), NP_HDR_LEN + 48);
    ck_assert(memcmp(raw, NP_F8_2x3_C, NP_HDR_LEN) == 0);
    ck_assert(memcmp(raw + NP_HDR_LEN, v, 48) == 0);
}
END_TEST

START_TEST(write_max_dims)
{
    int64_t shape[NPY_MAX_DIMS];
    const float v = 7.0f;
    unsigned char raw[4096];
    size_t n;
    npy_array a;
    char err[256];
    int k;

    for (k = 0; k < NPY_MAX_DIMS; k++) shape[k] = 1;
    ck_assert_int_eq(npy_write(tpath("md.npy"), NPY_F32, NPY_MAX_DIMS, shape, &v, err, sizeof err), 0);
    n = get_file("md.npy", raw, sizeof raw);
    ck_assert_int_eq((n - 4) % 64, 0);
    ck_assert_int_eq(raw[n - 5], '\n');
    read_ok("md.npy", &a);
    ck_assert_int_eq(a.ndim, NPY_MAX_DIMS);
    ck_assert_int_eq(a.nelem, 1);
    ck_assert(*(float *)a.data == 7.0f);
    npy_free(&a);

    /* 19-digit first dim (growth padding shrinks to 2), no data. */
    shape[0] = INT64_MAX;
    shape[1] = 0;
    ck_assert_int_eq(npy_write(tpath("md2.npy"), NPY_F64, 2, shape, NULL, err, sizeof err), 0);
    n = get_file("md2.npy", raw, sizeof raw);
    ck_assert_int_eq(n, 128);
    ck_assert(memcmp(raw + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807, 0), }  ", 79) == 0);
    read_ok("md2.npy", &a);
    ck_assert(a.nelem == 0 && a.shape[0] == INT64_MAX && a.shape[1] == 0);
    npy_free(&a);
}
END_TEST

START_TEST(write_overwrites)
{
    const float big[100] = { 0 }, small[2] = { 1, 2 };
    const int64_t s100[1] = { 100 }, s2[1] = { 2 };
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("ow.npy"), NPY_F32, 1, s100, big, err, sizeof err), 0);
    ck_assert_int_eq(npy_write(tpath("ow.npy"), NPY_F32, 1, s2, small, err, sizeof err), 0);
    read_ok("ow.npy", &a);
    ck_assert_int_eq(a.nelem, 2);
    ck_assert(memcmp(a.data, small, sizeof small) == 0);
    npy_free(&a);
}
END_TEST

/* npy_write_fd writes the bytes npy_write writes, from the descriptor's
   offset, names the given path in messages and leaves the file alone. */
START_TEST(write_fd_same_bytes)
{
    const double v[6] = { 1, 2, 3, 4, 5, 6 };
    const int64_t shape[2] = { 2, 3 };
    unsigned char a[512], b[512];
    size_t na, nb;
    char err[256];
    int fd;

    ck_assert_int_eq(npy_write(tpath("byname.npy"), NPY_F64, 2, shape, v, err, sizeof err), 0);
    fd = open(tpath("byfd.npy"), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(npy_write_fd(fd, "shown.npy", NPY_F64, 2, shape, v, err, sizeof err), 0);
    ck_assert_int_eq(close(fd), 0);
    na = get_file("byname.npy", a, sizeof a);
    nb = get_file("byfd.npy", b, sizeof b);
    ck_assert_uint_eq(na, nb);
    ck_assert(memcmp(a, b, na) == 0);
    fd = open("/dev/full", O_WRONLY);
    if (fd >= 0) {
        ck_assert_int_eq(npy_write_fd(fd, "shown.npy", NPY_F64, 2, shape, v, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "shown.npy: write failed: No space left on device") != NULL, "%s", err);
        close(fd);
    }
}
END_TEST

/* complex: pairs (re, im), written and read back bit for bit */
START_TEST(rt_complex)
{
    const double z[2][3][2] = { { { 1, -2 }, { 0.5, 0 }, { -0.0, 1e300 } }, { { 3, 4 }, { -5, -6 }, { 7, 8 } } };
    const float c[4][2] = { { 1.5f, -1 }, { 0, 2 }, { 3.25f, -0.5f }, { -7, 1e-30f } };
    const int64_t s2[2] = { 2, 3 }, s1[1] = { 4 };
    npy_array a;
    char err[256];

    ck_assert_int_eq(npy_write(tpath("c16.npy"), NPY_C128, 2, s2, z, err, sizeof err), 0);
    read_ok("c16.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_C128);
    ck_assert(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.nelem == 6);
    ck_assert(memcmp(a.data, z, sizeof z) == 0);
    npy_free(&a);
    ck_assert_int_eq(npy_write(tpath("c8.npy"), NPY_C64, 1, s1, c, err, sizeof err), 0);
    read_ok("c8.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_C64);
    ck_assert(a.ndim == 1 && a.nelem == 4);
    ck_assert(memcmp(a.data, c, sizeof c) == 0);
    npy_free(&a);
    ck_assert_uint_eq(npy_dtype_size(NPY_C64), 8);
    ck_assert_uint_eq(npy_dtype_size(NPY_C128), 16);
    ck_assert_str_eq(npy_dtype_name(NPY_C64), "<c8");
    ck_assert_str_eq(npy_dtype_name(NPY_C128), "<c16");
    /* the header numpy writes for complex128 of shape (2, 3) */
    FILE *f = fopen(tpath("c16.npy"), "rb");
    char hdr[129] = {0};
    ck_assert(f && fread(hdr, 1, 128, f) == 128);
    fclose(f);
    ck_assert(strstr(hdr + 10, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 3), }") == hdr + 10);
}
END_TEST

/* a complex128 file in Fortran order: whole pairs move, parts stay together */
START_TEST(np_fortran_complex)
{
    /* (arange(6) + 10j * arange(6)).reshape(2, 3) stored column by column */
    const double f[12] = { 0, 0, 3, 30, 1, 10, 4, 40, 2, 20, 5, 50 };
    npy_array a;
    put_npy("cf.npy", 1, "{'descr': '<c16', 'fortran_order': True, 'shape': (2, 3), }", f, sizeof f);
    read_ok("cf.npy", &a);
    ck_assert_int_eq(a.dtype, NPY_C128);
    for (int i = 0; i < 6; i++)
        ck_assert(((double *)a.data)[2 * i] == i && ((double *)a.data)[2 * i + 1] == 10 * i);
    npy_free(&a);
}
END_TEST

/* ------------------------------------------------------------------ numpy-written files */

START_TEST(np_fortran_2d)
{
    const double f[6] = { 0, 3, 1, 4, 2, 5 };       /* arange(6).reshape(2,3) in F order */
    npy_array a;
    int i;

    put_hdr("f2.npy", NP_F8_2x3_F, f, sizeof f);
    read_ok("f2.npy", &a);
    ck_assert_int_eq(a.ndim, 2);
    ck_assert(a.shape[0] == 2 && a.shape[1] == 3);
    for (i = 0; i < 6; i++) ck_assert(((double *)a.data)[i] == i);
    npy_free(&a);
}
END_TEST

START_TEST(np_fortran_3d)
{
    float f[24];
    const float *c;
    npy_array a;
    int e, i, j, k;

    for (e = 0; e < 24; e++) f[e] = (float)(100 * (e % 2) + 10 * (e / 2 % 3) + e / 6);
    put_npy("f3.npy", 1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 4), }" "                    ",
            f, sizeof f);
    read_ok("f3.npy", &a);
    ck_assert(a.ndim == 3 && a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 4);
    c = a.data;
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++)
            for (k = 0; k < 4; k++)
                ck_assert_msg(c[(i * 3 + j) * 4 + k] == 100 * i + 10 * j + k,
                              "[%d][%d][%d] = %g", i, j, k, (double)c[(i * 3 + j) * 4 + k]);
    npy_free(&a);
}
END_TEST

START_TEST(np_fortran_degenerate)
{
    const float v[3] = { 1, 2, 3 };
    const unsigned char b[6] = { 1, 0, 0, 1, 1, 0 };   /* (3,2) F order: cols [1,0,0] [1,1,0] */
    const unsigned char want[6] = { 1, 1, 0, 1, 0, 0 };
    npy_array a;

    put_npy("f1.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }" "                    ",
            v, sizeof v);
    read_ok("f1.npy", &a);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);

    put_npy("f0.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 5), }", NULL, 0);
    read_ok("f0.npy", &a);
    ck_assert_int_eq(a.nelem, 0);
    npy_free(&a);

    put_npy("fb.npy", 1, "{'descr': '|b1', 'fortran_order': True, 'shape': (3, 2), }", b, sizeof b);
    read_ok("fb.npy", &a);
    ck_assert(memcmp(a.data, want, 6) == 0);
    npy_free(&a);
}
END_TEST

START_TEST(np_version2_and_3)
{
    const float v[3] = { 0, 1, 2 };
    unsigned char buf[NP_HDR_LEN + 12];
    npy_array a;

    memcpy(buf, NP_F4_3_V2, NP_HDR_LEN);
    memcpy(buf + NP_HDR_LEN, v, sizeof v);
    put_file("v2.npy", buf, sizeof buf);
    read_ok("v2.npy", &a);
    ck_assert(a.dtype == NPY_F32 && a.ndim == 1 && a.shape[0] == 3);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);

    buf[6] = 3;      /* numpy writes 3.0 identically apart from the version byte */
    put_file("v3.npy", buf, sizeof buf);
    read_ok("v3.npy", &a);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);
}
END_TEST

START_TEST(np_odd_spacing)
{
    const float v[6] = { 1, 2, 3, 4, 5, 6 };
    npy_array a;

    put_npy("sp.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,3,), }", v, sizeof v);
    read_ok("sp.npy", &a);
    ck_assert(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    npy_free(&a);

    put_npy("sp2.npy", 2, "  { \"shape\" :( 2 ,\t3 , ) ,\n'fortran_order':False ,\r\n'descr':\"<f4\"}\t",
            v, sizeof v);
    read_ok("sp2.npy", &a);
    ck_assert(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    ck_assert(memcmp(a.data, v, sizeof v) == 0);
    npy_free(&a);

    put_npy("sp3.npy", 1, "{'shape':(2L, 3L),'descr':'<f4','fortran_order':False,}", v, sizeof v);
    read_ok("sp3.npy", &a);                     /* Python 2 numpy wrote longs */
    ck_assert(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3);
    npy_free(&a);
}
END_TEST

START_TEST(np_descr_variants)
{
    const double d[2] = { -1.0, 8.5 };
    const unsigned char b[4] = { 0, 1, 2, 0 }, bw[4] = { 0, 1, 1, 0 };
    npy_array a;

    put_npy("eq8.npy", 1, "{'descr': '=f8', 'fortran_order': False, 'shape': (2,), }", d, sizeof d);
    read_ok("eq8.npy", &a);
    ck_assert(a.dtype == NPY_F64 && memcmp(a.data, d, sizeof d) == 0);
    npy_free(&a);

    put_npy("eq4.npy", 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (), }", d, 4);
    read_ok("eq4.npy", &a);
    ck_assert(a.dtype == NPY_F32 && a.ndim == 0 && a.nelem == 1);
    npy_free(&a);

    put_npy("b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", b, sizeof b);
    read_ok("b1.npy", &a);
    ck_assert(a.dtype == NPY_BOOL && memcmp(a.data, bw, 4) == 0);
    npy_free(&a);
}
END_TEST

START_TEST(np_shapes)
{
    const double v = 3.0;
    npy_array a;

    put_hdr("0d.npy", NP_F8_0D, &v, sizeof v);
    read_ok("0d.npy", &a);
    ck_assert(a.ndim == 0 && a.nelem == 1 && *(double *)a.data == 3.0);
    npy_free(&a);

    put_hdr("z.npy", NP_B1_3x0x2, NULL, 0);
    read_ok("z.npy", &a);
    ck_assert(a.ndim == 3 && a.nelem == 0 && a.shape[1] == 0);
    npy_free(&a);

    /* A zero dim makes a huge shape legal: no data, no allocation. */
    put_npy("zh.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9223372036854775807), }",
            NULL, 0);
    read_ok("zh.npy", &a);
    ck_assert(a.nelem == 0 && a.shape[1] == INT64_MAX);
    npy_free(&a);

    /* Unpadded header without trailing newline is still a valid dict. */
    {
        unsigned char buf[128];
        const char *d = "{'descr':'<f8','fortran_order':False,'shape':()}";
        size_t n = strlen(d);
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (unsigned char)n;
        buf[9] = 0;
        memcpy(buf + 10, d, n);
        memcpy(buf + 10 + n, &v, 8);
        put_file("up.npy", buf, 10 + n + 8);
        read_ok("up.npy", &a);
        ck_assert(a.ndim == 0 && *(double *)a.data == 3.0);
        npy_free(&a);
    }
}
END_TEST

/* ------------------------------------------------------------------ rejections */

START_TEST(rej_magic_and_empty)
{
    unsigned char buf[NP_HDR_LEN + 48] = { 0 };

    put_file("empty.npy", "", 0);
    read_fails("empty.npy", "empty file");

    memcpy(buf, NP_F8_2x3_C, NP_HDR_LEN);
    buf[5] = 'Z';
    put_file("magic.npy", buf, sizeof buf);
    read_fails("magic.npy", "not a .npy file (bad magic)");

    put_file("zip.npy", "PK\x03\x04", 4);
    read_fails("zip.npy", "not a .npy file (bad magic)");

    put_file("text.npy", "hello world, this is not numpy\n", 31);
    read_fails("text.npy", "bad magic");
}
END_TEST

START_TEST(rej_truncated_header)
{
    put_file("th1.npy", "\x93NUM", 4);
    read_fails("th1.npy", "truncated header");

    put_file("th2.npy", NP_F8_2x3_C, 9);        /* cut inside the length field */
    read_fails("th2.npy", "truncated header");

    put_file("th3.npy", NP_F4_3_V2, 11);        /* v2: 4-byte length field cut */
    read_fails("th3.npy", "truncated header");

    put_file("th4.npy", NP_F8_2x3_C, 60);       /* cut inside the dict */
    read_fails("th4.npy", "truncated header: header length is 118 bytes but only 50 bytes follow");
}
END_TEST

START_TEST(rej_header_length_beyond_file)
{
    unsigned char buf[NP_HDR_LEN + 48] = { 0 };
    unsigned char *big;
    size_t n;

    memcpy(buf, NP_F8_2x3_C, NP_HDR_LEN);
    buf[8] = 0xff;
    buf[9] = 0xff;
    put_file("hl1.npy", buf, sizeof buf);
    read_fails("hl1.npy", "header length is 65535 bytes");

    memcpy(buf, NP_F4_3_V2, NP_HDR_LEN);
    buf[8] = buf[9] = buf[10] = buf[11] = 0xff;
    put_file("hl2.npy", buf, NP_HDR_LEN + 12);
    read_fails("hl2.npy", "header length is 4294967295 bytes");

    /* A header that fits in the file but exceeds the sanity limit. */
    n = 12 + (2u << 20);
    big = malloc(n);
    ck_assert_ptr_nonnull(big);
    memset(big, ' ', n);
    memcpy(big, "\x93NUMPY\x02\x00", 8);
    big[8] = 0;
    big[9] = 0;
    big[10] = 0x20;
    big[11] = 0;
    put_file("hl3.npy", big, n);
    free(big);
    read_fails("hl3.npy", "header too large");
}
END_TEST

START_TEST(rej_version)
{
    unsigned char buf[NP_HDR_LEN + 48] = { 0 };

    memcpy(buf, NP_F8_2x3_C, NP_HDR_LEN);
    buf[6] = 4;
    put_file("v4.npy", buf, sizeof buf);
    read_fails("v4.npy", "unsupported .npy format version 4.0");
    buf[6] = 1;
    buf[7] = 1;
    put_file("v11.npy", buf, sizeof buf);
    read_fails("v11.npy", "unsupported .npy format version 1.1");
    buf[6] = 0;
    buf[7] = 0;
    put_file("v0.npy", buf, sizeof buf);
    read_fails("v0.npy", "unsupported .npy format version 0.0");
}
END_TEST

START_TEST(rej_data_size)
{
    unsigned char buf[NP_HDR_LEN + 64] = { 0 };
    char err[512];
    npy_array a;

    memcpy(buf, NP_F8_2x3_C, NP_HDR_LEN);
    put_file("td.npy", buf, NP_HDR_LEN + 40);
    read_fails("td.npy", "truncated: header says 48 bytes of data, file has 40");
    put_file("td0.npy", buf, NP_HDR_LEN);
    read_fails("td0.npy", "truncated: header says 48 bytes of data, file has 0");
    put_file("tr.npy", buf, NP_HDR_LEN + 56);
    read_fails("tr.npy", "trailing data: header says 48 bytes of data, file has 56");

    /* exact message format */
    ck_assert_int_eq(npy_read(tpath("td.npy"), &a, 0, err, sizeof err), -1);
    ck_assert_str_eq(strstr(err, "td.npy"), "td.npy: truncated: header says 48 bytes of data, file has 40");
}
END_TEST

START_TEST(rej_dtypes)
{
    static const struct { const char *descr, *phrase; } t[] = {
        { "'>f8'", "unsupported dtype '>f8' (big-endian); use '<f8', '<f4', '<c16' or '<c8'" },
        { "'>c16'", "unsupported dtype '>c16' (big-endian)" },
        { "'<c32'", "unsupported dtype '<c32'" },
        { "'>f4'", "unsupported dtype '>f4' (big-endian)" },
        { "'<i8'", "unsupported dtype '<i8'; use '<f8', '<f4', '<c16', '<c8' or '|b1'" },
        { "'<i4'", "unsupported dtype '<i4'" },
        { "'|u1'", "unsupported dtype '|u1'" },
        { "'|O'", "unsupported dtype '|O'" },
        { "'<f2'", "unsupported dtype '<f2'" },
        { "'<b1'", "unsupported dtype '<b1'" },
        { "'|f8'", "unsupported dtype '|f8'" },
        { "'f8'", "unsupported dtype 'f8'" },
        { "''", "unsupported dtype ''" },
        { "'<U10'", "unsupported dtype '<U10'" },
        { "[('a', '<f8'), ('b', '<i4')]", "structured dtype" },
        { "{'names': ['a'], 'formats': ['<f8']}", "structured dtype" },
        { "'\x01\x7f'", "unsupported dtype '?\?'" },
    };
    char dict[256], name[32];
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }", t[i].descr);
        snprintf(name, sizeof name, "dt%zu.npy", i);
        put_npy(name, 1, dict, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
        read_fails(name, t[i].phrase);
    }
}
END_TEST

START_TEST(rej_malformed_dict)
{
    static const struct { const char *dict, *phrase; } t[] = {
        { "", "malformed header: expected '{' at offset 54, found end of header" },
        { "(", "malformed header: expected '{'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), ", "expected a quoted string" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,) ", "expected ',' or '}'" },
        { "{'descr': '<f8' 'fortran_order': False, 'shape': (1,)}", "expected ',' or '}'" },
        { "{'descr' '<f8', 'fortran_order': False, 'shape': (1,)}", "expected ':' after key" },
        { "{descr: '<f8', 'fortran_order': False, 'shape': (1,)}", "expected a quoted string" },
        { "{'descr: '<f8', 'fortran_order': False, 'shape': (1,)}", "malformed header" },
        { "{'descr': '<f8, 'fortran_order': False, 'shape': (1,)}", "malformed header" },
        { "{'descr': '<f8}", "unterminated string" },
        { "{'descr': '<\\x66' , 'fortran_order': False, 'shape': (1,)}", "escape sequence" },
        { "{'fortran_order': False, 'shape': (1,)}", "missing key 'descr'" },
        { "{'descr': '<f8', 'shape': (1,)}", "missing key 'fortran_order'" },
        { "{'descr': '<f8', 'fortran_order': False}", "missing key 'shape'" },
        { "{}", "missing key 'descr'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}", "unexpected key 'x'" },
        { "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", "duplicate key 'descr'" },
        { "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}", "'fortran_order' must be True or False, found '0'" },
        { "{'descr': '<f8', 'fortran_order': true, 'shape': (1,)}", "found 'true'" },
        { "{'descr': '<f8', 'fortran_order': 'False', 'shape': (1,)}", "expected True or False" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': [1]}", "must be a tuple, not a list" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1)}", "is not a tuple" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': 1}", "expected a tuple for 'shape'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,,)}", "expected an integer dimension" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (,)}", "expected an integer dimension" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1.0,)}", "expected ',' or ')' in 'shape'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1 2)}", "expected ',' or ')' in 'shape'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': ('1',)}", "expected an integer dimension" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (01,)}", "leading zero" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,", "malformed header" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} x", "expected end of header after '}'" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}}", "expected end of header" },
        { "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)\x01}", "found byte 0x01" },
    };
    char name[32];
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(name, sizeof name, "md%zu.npy", i);
        dict_fails(name, t[i].dict, t[i].phrase);
    }

    {   /* NUL byte inside the header */
        unsigned char buf[256];
        size_t n = mk_npy(buf, sizeof buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}", NULL, 0);
        buf[12] = 0;
        put_file("nul.npy", buf, n);
        read_fails("nul.npy", "malformed header");
    }
}
END_TEST

START_TEST(rej_shapes)
{
    static const struct { const char *shape, *phrase; } t[] = {
        { "(2, -3)", "negative dimension -3" },
        { "(-1,)", "negative dimension -1" },
        { "(4294967296, 4294967296)", "overflow" },
        { "(9223372036854775807, 2)", "overflow" },
        { "(2305843009213693952,)", "overflow" },                /* 2^61 * 8 bytes */
        { "(9223372036854775808,)", "dimension 9223372036854775808 in shape is too large" },
        { "(99999999999999999999999999,)", "too large" },
        /* Representable but far beyond the file: refused without allocating. */
        { "(1152921504606846976,)", "truncated: header says 9223372036854775808 bytes of data, file has 8" },
        { "(1000000, 1000000)", "truncated: header says 8000000000000 bytes of data" },
        { "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)", "too many dimensions" },
    };
    char dict[256], name[32];
    size_t i;

    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", t[i].shape);
        snprintf(name, sizeof name, "sh%zu.npy", i);
        put_npy(name, 1, dict, "\0\0\0\0\0\0\0\0", 8);
        read_fails(name, t[i].phrase);
    }
}
END_TEST

START_TEST(rej_paths)
{
    npy_array a;
    char err[512];

    ck_assert_int_eq(mkdir(tpath("dir.npy"), 0700), 0);
    read_fails("dir.npy", "is a directory");
    read_fails("missing.npy", "cannot open: No such file or directory");
    read_fails("nodir/x.npy", "cannot open: No such file or directory");
    ck_assert_int_eq(mkfifo(tpath("fifo.npy"), 0600), 0);
    read_fails("fifo.npy", "not a regular file");

    /* NULL path or output */
    memset(&a, 0x5a, sizeof a);
    ck_assert_int_eq(npy_read(NULL, &a, 0, err, sizeof err), -1);
    ck_assert_ptr_null(a.data);
    ck_assert_int_eq(npy_read(tpath("missing.npy"), NULL, 0, err, sizeof err), -1);
}
END_TEST

START_TEST(err_buffer)
{
    npy_array a;
    char err[8];

    memset(err, 'x', sizeof err);
    ck_assert_int_eq(npy_read(tpath("missing.npy"), &a, 0, err, sizeof err), -1);
    ck_assert_int_eq(strlen(err), 7);
    ck_assert(strncmp(err, g_dir, 7) == 0);
    ck_assert_int_eq(npy_read(tpath("missing.npy"), &a, 0, NULL, 0), -1);
    ck_assert_ptr_null(a.data);
    err[0] = 'x';
    ck_assert_int_eq(npy_read(tpath("missing.npy"), &a, 0, err, 1), -1);
    ck_assert_int_eq(err[0], '\0');
}
END_TEST

START_TEST(free_safe)
{
    npy_array a;
    memset(&a, 0, sizeof a);
    npy_free(&a);
    npy_free(&a);
    npy_free(NULL);
    ck_assert_ptr_null(a.data);
    ck_assert_int_eq(npy_dtype_size(NPY_F32), 4);
    ck_assert_int_eq(npy_dtype_size(NPY_F64), 8);
    ck_assert_int_eq(npy_dtype_size(NPY_BOOL), 1);
    ck_assert_int_eq(npy_dtype_size((npy_dtype)0), 0);
    ck_assert_str_eq(npy_dtype_name(NPY_F32), "<f4");
    ck_assert_str_eq(npy_dtype_name(NPY_F64), "<f8");
    ck_assert_str_eq(npy_dtype_name(NPY_BOOL), "|b1");
    ck_assert_str_eq(npy_dtype_name((npy_dtype)99), "?");
}
END_TEST

/* ------------------------------------------------------------------ writer errors */

static void write_fails(const char *name, npy_dtype t, int ndim, const int64_t *shape,
                        const void *data, const char *phrase)
{
    char err[512];
    int rc = npy_write(tpath(name), t, ndim, shape, data, err, sizeof err);
    ck_assert_msg(rc == -1, "%s: expected failure", name);
    ck_assert_msg(strstr(err, phrase) != NULL, "%s: message \"%s\" lacks \"%s\"", name, err, phrase);
    ck_assert_msg(strstr(err, name) != NULL, "message \"%s\" does not name the file", err);
    ck_assert_msg(!file_exists(name), "%s was left behind", name);
}

START_TEST(write_bad_args)
{
    const int64_t neg[2] = { 2, -1 }, ovf[2] = { INT64_MAX, 2 }, ok[1] = { 4 }, big[1] = { INT64_MAX / 2 };
    int64_t many[NPY_MAX_DIMS + 1];
    const double v[4] = { 0 };
    int k;

    for (k = 0; k <= NPY_MAX_DIMS; k++) many[k] = 1;
    write_fails("w1.npy", NPY_F64, 2, neg, v, "negative dimension -1");
    write_fails("w2.npy", NPY_F64, 2, ovf, v, "shape too large");
    write_fails("w2b.npy", NPY_F64, 1, big, v, "shape too large");
    write_fails("w3.npy", NPY_F64, NPY_MAX_DIMS + 1, many, v, "invalid number of dimensions 33");
    write_fails("w4.npy", NPY_F64, -1, ok, v, "invalid number of dimensions -1");
    write_fails("w5.npy", (npy_dtype)0, 1, ok, v, "invalid dtype 0");
    write_fails("w6.npy", (npy_dtype)7, 1, ok, v, "invalid dtype 7");
    write_fails("w7.npy", NPY_F64, 1, ok, NULL, "no data");
    write_fails("w8.npy", NPY_F64, 1, NULL, v, "no shape");
    write_fails("nodir/w9.npy", NPY_F64, 1, ok, v, "cannot create: No such file or directory");
}
END_TEST

START_TEST(write_partial_removed)
{
    struct rlimit old, lim;
    static double v[4096];
    const int64_t shape[1] = { 4096 };

    /* Let the file grow to 4 KiB only: the data write fails with EFBIG. */
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    write_fails("part.npy", NPY_F64, 1, shape, v, "write failed: File too large");
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
}
END_TEST

/* An array of several MiB read into memory advised for huge pages and into
   plain memory: the same values, aligned to 2 MiB when advised (where the
   system has MADV_HUGEPAGE); freed by npy_free either way. */
START_TEST(read_large_huge_pages)
{
    int64_t shape[2] = {700, 1000}; /* 5.6 MB */
    size_t n = (size_t)(shape[0] * shape[1]);
    double *x = malloc(n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)i * 0.25 - 7;
    char err[512];
    ck_assert_int_eq(npy_write(tpath("large.npy"), NPY_F64, 2, shape, x, err, sizeof err), 0);
    for (int huge = 0; huge <= 1; huge++) {
        npy_array a;
        ck_assert_int_eq(npy_read(tpath("large.npy"), &a, huge, err, sizeof err), 0);
        ck_assert_int_eq(a.nelem, (int64_t)n);
        ck_assert(memcmp(a.data, x, n * sizeof *x) == 0);
#ifdef MADV_HUGEPAGE
        if (huge)
            ck_assert_uint_eq((uintptr_t)a.data % ((size_t)2 << 20), 0);
#endif
        npy_free(&a);
    }
    free(x);
}
END_TEST

START_TEST(write_dev_full)
{
    struct stat st;
    const double v[2] = { 1, 2 };
    const int64_t shape[1] = { 2 };
    char err[256];

    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) return;
    ck_assert_int_eq(npy_write("/dev/full", NPY_F64, 1, shape, v, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/dev/full: write failed: No space left on device") != NULL, "%s", err);
    ck_assert_int_eq(stat("/dev/full", &st), 0);     /* not a regular file: never removed */
}
END_TEST

/* ------------------------------------------------------------------ driver */

static Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *rt = tcase_create("roundtrip"), *np = tcase_create("numpy_files");
    TCase *rej = tcase_create("reject"), *wr = tcase_create("write_errors");

    tcase_add_test(rt, rt_f32_1d);
    tcase_add_test(rt, rt_f64_3d);
    tcase_add_test(rt, rt_bool);
    tcase_add_test(rt, rt_0d);
    tcase_add_test(rt, rt_zero_size);
    tcase_add_test(rt, rt_complex);
    tcase_add_test(np, np_fortran_complex);
    tcase_add_test(rt, write_matches_numpy);
    tcase_add_test(rt, write_max_dims);
    tcase_add_test(rt, write_overwrites);
    tcase_add_test(rt, write_fd_same_bytes);
    tcase_add_test(np, np_fortran_2d);
    tcase_add_test(np, np_fortran_3d);
    tcase_add_test(np, np_fortran_degenerate);
    tcase_add_test(np, np_version2_and_3);
    tcase_add_test(np, np_odd_spacing);
    tcase_add_test(np, np_descr_variants);
    tcase_add_test(np, np_shapes);
    tcase_add_test(rej, rej_magic_and_empty);
    tcase_add_test(rej, rej_truncated_header);
    tcase_add_test(rej, rej_header_length_beyond_file);
    tcase_add_test(rej, rej_version);
    tcase_add_test(rej, rej_data_size);
    tcase_add_test(rej, rej_dtypes);
    tcase_add_test(rej, rej_malformed_dict);
    tcase_add_test(rej, rej_shapes);
    tcase_add_test(rej, rej_paths);
    tcase_add_test(rej, err_buffer);
    tcase_add_test(rej, free_safe);
    tcase_add_test(wr, write_bad_args);
    tcase_add_test(wr, write_partial_removed);
    tcase_add_test(wr, write_dev_full);
    tcase_add_test(wr, read_large_huge_pages);
    suite_add_tcase(s, rt);
    suite_add_tcase(s, np);
    suite_add_tcase(s, rej);
    suite_add_tcase(s, wr);
    return s;
}

/* Removes DIR and everything below it. */
static void rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat st;
    char p[512];

    if (d == NULL) return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_rf(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

int main(void)
{
    SRunner *sr;
    int failed;

    strcpy(g_dir, "/tmp/check_npy.XXXXXX");
    if (mkdtemp(g_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    sr = srunner_create(npy_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    rm_rf(g_dir);
    return failed == 0 ? 0 : 1;
}
