/* The end of every Check suite's main: run the suite (in this process with
 * nofork, for suites whose fixtures are process-wide), print each test's
 * result (scripts/conformance.py reads them) and count failures. */
#ifndef DDIO_SUITE_RUN_H
#define DDIO_SUITE_RUN_H

#include <check.h>

static inline int check_run(Suite *s, int nofork)
{
    SRunner *sr = srunner_create(s);
    if (nofork)
        srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}

#endif
