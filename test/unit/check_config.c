/* Unit tests of ddio-server's command line and configuration file
 * (ioserver/config.c): the file's settings apply, flags override them,
 * --root flags replace the file's roots, --insecure/--secret-file override
 * the file's choice of the other, and mistakes name FILE:LINE. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "suite_run.h"

static char g_path[] = "/tmp/ddio-check-config.XXXXXX";

static void write_conf(const char *text)
{
    FILE *f = fopen(g_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int parse(struct srv_config *c, char *err, size_t n, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, n);
    argv[argc++] = "ddio-server";
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 31;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    err[0] = '\0';
    return config_parse(c, argc, argv, err, n);
}

static const char *BASE =
    "# a comment\n"
    "listen = 127.0.0.1:7001   # trailing comment\n"
    "root = /data/a\n"
    "root = /data/b\n"
    "block_size = 2M\n"
    "buffers = 8\n"
    "rotate = yes\n"
    "secret_file = /etc/ddio/secret\n"
    "log-level = debug\n"
    "max_connections = 99\n"
    "stop_timeout = 7\n"
    "page_cache = off\n"
    "checksums = on\n";

START_TEST(file_applies)
{
    struct srv_config c;
    char err[512];
    write_conf(BASE);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), 0);
    ck_assert_str_eq(c.listen_host, "127.0.0.1");
    ck_assert_int_eq(c.listen_port, 7001);
    ck_assert_int_eq(c.nroots, 2);
    ck_assert_str_eq(c.roots[1], "/data/b");
    ck_assert_uint_eq(c.block_size, 2u << 20);
    ck_assert_uint_eq(c.buffers, 8);
    ck_assert_int_eq(c.rotate, 1);
    ck_assert_str_eq(c.secret_file, "/etc/ddio/secret");
    ck_assert_uint_eq(c.max_conns, 99);
    ck_assert_uint_eq(c.stop_timeout_s, 7);
    ck_assert_int_eq(c.page_cache, 0);
    ck_assert_int_eq(c.checksums, 1);
}
END_TEST

START_TEST(flags_beat_file)
{
    struct srv_config c;
    char err[512];
    write_conf(BASE);
    /* flags before and after --config alike: the file is read first */
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--buffers", "3", "--config", g_path,
                           "--listen", "0.0.0.0:0", "--root", "/x", "--block-size", "4096",
                           NULL), 0);
    ck_assert_uint_eq(c.buffers, 3);
    ck_assert_int_eq(c.listen_port, 0);
    ck_assert_uint_eq(c.block_size, 4096);
    ck_assert_int_eq(c.nroots, 1);                 /* --root replaced both */
    ck_assert_str_eq(c.roots[0], "/x");
    ck_assert_uint_eq(c.max_conns, 99);            /* the rest from the file */
    ck_assert_int_eq(c.page_cache, 0);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--page-cache", "on", NULL), 0);
    ck_assert_int_eq(c.page_cache, 1);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--listen", "0.0.0.0:0", "--root", "/x", "--insecure",
                           NULL), 0);
    ck_assert_int_eq(c.page_cache, 1);             /* the default */
    ck_assert_int_eq(c.checksums, SUMS_MIRRORED);  /* the default */
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--checksums", "off", NULL), 0);
    ck_assert_int_eq(c.checksums, 0);              /* the flag beats the file's on */
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--checksums", "mirrored",
                           NULL), 0);
    ck_assert_int_eq(c.checksums, SUMS_MIRRORED);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--insecure", NULL), 0);
    ck_assert_int_eq(c.insecure, 1);
    ck_assert_ptr_null(c.secret_file);
    write_conf("listen = 1.2.3.4:5\nroot = /r\ninsecure = yes\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--secret-file", "/s",
                           NULL), 0);
    ck_assert_int_eq(c.insecure, 0);
    ck_assert_str_eq(c.secret_file, "/s");
    /* on the command line itself both are still a mistake */
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, "--secret-file", "/s",
                           "--insecure", NULL), -1);
}
END_TEST

START_TEST(mistakes)
{
    struct srv_config c;
    char err[512];
    write_conf("listen = 127.0.0.1:1\nbuffers = lots\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, ":2: --buffers"));
    write_conf("listen = 127.0.0.1:1\n\nfrobnicate = 1\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, ":3: unknown option 'frobnicate'"));
    write_conf("listen 127.0.0.1:1\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, ":1: expected 'option = value'"));
    write_conf("config = /etc/other\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--listen", "0.0.0.0:0", "--root", "/x",
                           "--insecure", "--page-cache", "sometimes", NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, "--page-cache: 'sometimes' is not on or off"));
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--listen", "0.0.0.0:0", "--root", "/x",
                           "--insecure", "--checksums", "crc64", NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, "--checksums: 'crc64' is not on, off or mirrored"));
    write_conf("rotate = maybe\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", "/nonexistent/ddio.conf", NULL),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ddio.conf"));
    /* still required when neither file nor flags give it */
    write_conf("root = /r\nsecret_file = /s\n");
    ck_assert_int_eq(parse(&c, err, sizeof(err), "--config", g_path, NULL), -1);
    ck_assert_ptr_nonnull(strstr(err, "--listen"));
}
END_TEST

int main(void)
{
    int fd = mkstemp(g_path);
    if (fd < 0)
        return 1;
    close(fd);
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, NULL, config_release);
    tcase_add_test(tc, file_applies);
    tcase_add_test(tc, flags_beat_file);
    tcase_add_test(tc, mistakes);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 1);
    unlink(g_path);
    return failed ? 1 : 0;
}
