"""life_subproc: CPython's subprocess (vfork, then
close_range in the child through the shim's wrapper, in shared memory) next to
a server that accepts one connection per round and sets TCP_NODELAY on it.
   python3 life_subproc.py ROUNDS
Prints the fds open at the end and whether a new open() still works."""
import os
import socket
import subprocess
import sys

rounds = int(sys.argv[1])
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(16)
port = srv.getsockname()[1]
for i in range(rounds):
    subprocess.run(["/bin/true"], check=True)
    c = socket.create_connection(("127.0.0.1", port))
    a, _ = srv.accept()
    a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    a.close()
    c.close()
srv.close()
try:
    f = open("/dev/null")
    f.close()
    opened = "ok"
except OSError as e:
    opened = "errno %d" % e.errno
# The shim's own log file (SOCKAUDIT_LOG, held once it has written a line)
# is not one of the host's fds.
log = os.environ.get("SOCKAUDIT_LOG", "")
def ours(fd):
    try:
        return bool(log) and os.readlink("/proc/self/fd/" + fd) == os.path.abspath(log)
    except OSError:
        return False
print("rounds %d fds_open %d open %s" % (rounds, len([f for f in os.listdir("/proc/self/fd") if not ours(f)]), opened))
