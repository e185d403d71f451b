#!/usr/bin/python3
"""upstream.py: scenario 5's application server.

A single-threaded HTTP server with a small listen() backlog that answers 200
at once. Like a real application server it starts its stopwatch only when it
has taken the connection off the accept queue, and logs, per request:
    <unix time> <X-Request-Id> <handling ms>
so the reader can compare its view with nginx's.

Usage: upstream.py PORT BACKLOG LOGFILE
"""
import signal
import socket
import sys
import time

RESP = b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"


def main():
    port, backlog, logpath = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(backlog)
    with open(logpath, "w", buffering=1) as log:
        while True:
            conn, _ = ls.accept()
            t0 = time.perf_counter()
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            rid = "-"
            for line in data.split(b"\r\n"):
                if line.lower().startswith(b"x-request-id:"):
                    rid = line.split(b":", 1)[1].strip().decode("ascii", "replace")
            conn.sendall(RESP)
            ms = (time.perf_counter() - t0) * 1000
            conn.close()
            log.write("%.3f %s %.3f\n" % (time.time(), rid, ms))


if __name__ == "__main__":
    main()
