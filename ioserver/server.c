/* The server's error text: every error a client or the log gets names the
 * server ("server HOST:PORT: ..."). It is alone here, calling nothing of
 * the server, so the engine and the transports that format errors do not
 * call back into the connection code that calls them. */
#include "server.h"

#include <stdio.h>

void srv_errmsg(const struct server *srv, char *out, size_t n, const char *fmt, va_list ap)
{
    int k = snprintf(out, n, "server %s: ", srv->name);
    if (k >= 0 && (size_t)k < n)
        vsnprintf(out + k, n - (size_t)k, fmt, ap);
}
