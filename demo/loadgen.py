#!/usr/bin/python3
"""loadgen.py: a steady request rate for scenario 5.

Starts one HTTP/1.0 GET every 1/RATE seconds for SECONDS (each in its own
thread, so a slow request never delays the next one) and prints how many
requests finished with which status and how long they took.

Usage: loadgen.py PORT RATE SECONDS
"""
import socket
import sys
import threading
import time

results = []
lock = threading.Lock()


def one(port):
    t0 = time.monotonic()
    status = "error"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            s.sendall(b"GET / HTTP/1.0\r\nHost: demo\r\n\r\n")
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            parts = data.split(b" ", 2)
            if len(parts) > 1:
                status = parts[1].decode("ascii", "replace")
    except OSError as e:
        status = type(e).__name__
    with lock:
        results.append((status, time.monotonic() - t0))


def main():
    port, rate, secs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    threads = []
    start = time.monotonic()
    n = int(rate * secs)
    for i in range(n):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        t = threading.Thread(target=one, args=(port,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    by_status = {}
    for st, _ in results:
        by_status[st] = by_status.get(st, 0) + 1
    slow = sorted(d for _, d in results if d >= 0.5)
    print("client: %d requests at %g/s over %g s; status %s; %d took 0.5 s or more (max %.2f s)"
          % (len(results), rate, secs,
             ", ".join("%s x%d" % kv for kv in sorted(by_status.items())),
             len(slow), slow[-1] if slow else 0.0))


if __name__ == "__main__":
    main()
