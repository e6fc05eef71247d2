/* Unit tests of the mount's cache (tools/ddio_fuse_cache.c): what is
 * dropped when a name or a tree changes, here or elsewhere, whatever the
 * depth of what was kept under it, and that a change to a name nothing is
 * kept under leaves the rest alone. Each test runs in its own process
 * (the cache is process-wide): one server, its watch up, 60 s kept. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ddio_fuse_cache.h"
#include "ddio_proto.h"
#include "suite_run.h"

static void up(void)
{
    mc_init(1, 60);
    mc_up(NULL, 0, 1);
    ck_assert(mc_watching());
}

static void put(const char *path, int is_dir)
{
    struct ddio_cstat st;
    memset(&st, 0, sizeof(st));
    st.is_dir = is_dir;
    st.size = strlen(path);
    mc_put(path, &st, mc_gen());
}

static int get(const char *path)
{
    struct ddio_cstat st;
    int rc = mc_get(path, &st);
    if (rc == 1)
        ck_assert_uint_eq(st.size, strlen(path));    /* its own entry */
    return rc;
}

/* a file made and removed here: known at once, the others untouched */
START_TEST(t_own_file_names)
{
    up();
    put("/d", 1);
    for (int i = 0; i < 3; i++) {
        char p[32];
        snprintf(p, sizeof(p), "/d/f%d", i);
        struct ddio_cstat st;
        memset(&st, 0, sizeof(st));
        st.size = strlen(p);
        mc_own_name(p, 1, &st, 0, mc_gen());
    }
    ck_assert_int_eq(get("/d/f1"), 1);
    mc_own_name("/d/f1", 0, NULL, 0, mc_gen());
    ck_assert_int_eq(get("/d/f1"), 0);
    ck_assert_int_eq(get("/d/f0"), 1);
    ck_assert_int_eq(get("/d/f2"), 1);
    ck_assert_int_eq(get("/d"), 1);        /* its names changed here: still known */
}
END_TEST

/* a renamed directory here: it and everything under it, at any depth */
START_TEST(t_own_tree)
{
    up();
    put("/d", 1);
    put("/d/a", 0);
    put("/d/e", 1);
    put("/d/e/f", 0);
    put("/d/e/g/h", 0);
    put("/dx", 0);                          /* a sibling sharing the prefix */
    mc_own_tree("/d");
    ck_assert_int_eq(get("/d"), -1);
    ck_assert_int_eq(get("/d/a"), -1);
    ck_assert_int_eq(get("/d/e/f"), -1);
    ck_assert_int_eq(get("/d/e/g/h"), -1);
    ck_assert_int_eq(get("/dx"), 1);
}
END_TEST

/* another process's change of a tree: dropped, then kept anew and dropped
 * again (the counts under each directory follow the drops) */
START_TEST(t_inval_tree_twice)
{
    up();
    put("/a/b/c/d", 0);
    put("/a/b/x", 0);
    mc_inval(NULL, DDIO_IV_TREE | DDIO_IV_NAME, "/a/b");
    ck_assert_int_eq(get("/a/b/c/d"), -1);
    ck_assert_int_eq(get("/a/b/x"), -1);
    put("/a/b/y", 0);
    put("/a/b/c/z", 0);
    ck_assert_int_eq(get("/a/b/y"), 1);
    mc_inval(NULL, DDIO_IV_TREE, "/a");
    ck_assert_int_eq(get("/a/b/y"), -1);
    ck_assert_int_eq(get("/a/b/c/z"), -1);
}
END_TEST

/* a directory removed here drops what was kept under it, also when its
 * files were first removed one by one */
START_TEST(t_own_dir_removed)
{
    up();
    put("/p", 1);
    put("/p/q", 1);
    put("/p/q/r", 0);
    put("/p/q/s", 0);
    mc_inval(NULL, DDIO_IV_NAME, "/p/q/s");
    ck_assert_int_eq(get("/p/q/s"), -1);
    ck_assert_int_eq(get("/p/q/r"), 1);
    mc_own_name("/p/q", 0, NULL, 0, mc_gen());
    ck_assert_int_eq(get("/p/q"), 0);
    ck_assert_int_ne(get("/p/q/r"), 1);
    put("/p/q/r", 0);                       /* kept again: then dropped again */
    mc_own_tree("/p/q");
    ck_assert_int_eq(get("/p/q/r"), -1);
}
END_TEST

/* the root's tree: everything but the root */
START_TEST(t_root_tree)
{
    up();
    put("/", 1);
    put("/f", 0);
    put("/g/h", 0);
    mc_inval(NULL, DDIO_IV_TREE, "/");
    ck_assert_int_eq(get("/f"), -1);
    ck_assert_int_eq(get("/g/h"), -1);
    ck_assert_int_eq(get("/"), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuse_cache");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_own_file_names);
    tcase_add_test(tc, t_own_tree);
    tcase_add_test(tc, t_inval_tree_twice);
    tcase_add_test(tc, t_own_dir_removed);
    tcase_add_test(tc, t_root_tree);
    suite_add_tcase(s, tc);
    return check_run(s, 0) ? 1 : 0;
}
