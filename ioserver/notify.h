/* Service manager readiness notification (systemd's sd_notify protocol,
 * without libsystemd): one datagram to the AF_UNIX socket named by
 * $NOTIFY_SOCKET ("/path", or "@name" for the abstract namespace). */
#ifndef DDIO_SRV_NOTIFY_H
#define DDIO_SRV_NOTIFY_H

/* Send state (e.g. "READY=1", "STOPPING=1"). 0 when sent, 0 as well when
 * $NOTIFY_SOCKET is unset (not run by a service manager), else -errno. */
int srv_notify(const char *state);

#endif
