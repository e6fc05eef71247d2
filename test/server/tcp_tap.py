#!/usr/bin/env python3
"""tcp_tap.py TARGET_HOST:PORT PORT_FILE CAPTURE_FILE

A passive tap for the TLS tests: listens on 127.0.0.1 (a free port, written
to PORT_FILE), forwards every connection to TARGET both ways, and appends
every byte it forwards, in either direction, to CAPTURE_FILE: what a
capture on the wire would hold. Runs until killed."""
import socket
import sys
import threading


def pump(src, dst, cap, lock):
    try:
        while True:
            b = src.recv(1 << 16)
            if not b:
                break
            with lock:
                cap.write(b)
                cap.flush()
            dst.sendall(b)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    lis = socket.socket()
    lis.bind(("127.0.0.1", 0))
    lis.listen(64)
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(lis.getsockname()[1]))
    import os
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    cap = open(sys.argv[3], "ab")
    lock = threading.Lock()
    while True:
        c, _ = lis.accept()
        s = socket.create_connection((host, int(port)))
        for a, b in ((c, s), (s, c)):
            threading.Thread(target=pump, args=(a, b, cap, lock), daemon=True).start()


if __name__ == "__main__":
    main()
