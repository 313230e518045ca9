#!/usr/bin/env python3
"""nestbox's behaviour tracer inside the guest: nestbox's monitor (native/monitor, the host's own, baked
into the image) on syscall and sched tracepoints, filtered to the sample's cgroup, so nothing ptraces
the sample.

init.sh starts it once per image, at boot, before the host saves the machine's memory, so every task
restored from that memory finds the monitor loaded and attached, waiting to be armed.

It answers the analyzer on a unix socket, one command per connection:
  start   write the stream header on the virtio-serial port org.nestbox.trace, then arm the monitor on
          the sample cgroup with that port as its records file (the host decodes the records with the
          parser of its own monitor)
  drain   disarm: the monitor writes everything of the session and closes the port; then an end line
  stop    end the monitor and free the port (the analyzer may then trace with strace)
/run/nestbox/tracer.state says "ready monitor" once loaded, or "failed <reason>".
"""

import json
import os
import select
import socket
import subprocess
import sys
import time

RUN = "/run/nestbox"
STATE = RUN + "/tracer.state"
SOCKET = RUN + "/tracer.sock"
CGROUP = "/sys/fs/cgroup/nestbox-sample"
MONITOR = "/usr/lib/nestbox/monitor"
PORT_NAME = "org.nestbox.trace"
# The guest's memory is small: a 4 MiB ring buffer (the host's is 32 MiB).
RING_BYTES = 4 << 20
LOAD_TIMEOUT = 120
ANSWER_TIMEOUT = 60
PORT_TIMEOUT = 10


def port_device(name):
    for port in os.listdir("/sys/class/virtio-ports"):
        with open("/sys/class/virtio-ports/%s/name" % port) as handle:
            if handle.read().strip() == name:
                return "/dev/" + port
    raise RuntimeError("no virtio-serial port named " + name)


def write_state(text):
    with open(STATE + ".partial", "w") as handle:
        handle.write(text + "\n")
    os.rename(STATE + ".partial", STATE)


def write_port(path, data):
    """A port has one writer at a time: waits while the monitor (or strace) still holds it."""
    deadline = time.time() + PORT_TIMEOUT
    while True:
        try:
            port = os.open(path, os.O_WRONLY)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(port, view):]
    finally:
        os.close(port)


class Monitor:
    def __init__(self):
        os.makedirs(CGROUP, exist_ok=True)
        # The cgroup's id is its folder's inode; it sits one level below the root.
        self.cgroup_id = os.stat(CGROUP).st_ino
        self.port = port_device(PORT_NAME)
        self.stderr = open(RUN + "/tracer.err", "wb")
        self.child = subprocess.Popen([MONITOR, "-b", str(RING_BYTES)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self.stderr)
        self.pending = b""

    def answer(self, timeout):
        """The monitor's next control line, as a dict; None when it said nothing in time or ended."""
        deadline = time.time() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.child.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.child.stdout.fileno(), 4096)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            return {"ctl": "error", "message": line.decode(errors="replace")}

    def command(self, text, expected):
        self.child.stdin.write(text.encode() + b"\n")
        self.child.stdin.flush()
        reply = self.answer(ANSWER_TIMEOUT)
        return reply if reply and reply.get("ctl") == expected else None, reply

    def start(self):
        write_port(self.port, b"nestbox-trace monitor\n")
        armed, reply = self.command("arm %d 1 %s" % (self.cgroup_id, self.port), "armed")
        return "ok ebpf monitor" if armed else "failed %s" % json.dumps(reply)

    def drain(self):
        disarmed, reply = self.command("disarm", "disarmed")
        if not disarmed:
            return "incomplete %s" % json.dumps(reply)
        write_port(self.port, (json.dumps({"ctl": "end", "lost": disarmed.get("lost", 0)}) + "\n").encode())
        return "drained"

    def stop(self):
        self.child.kill()
        self.child.wait()


def serve(monitor):
    try:
        os.unlink(SOCKET)
    except OSError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(SOCKET)
    os.chmod(SOCKET, 0o600)
    server.listen(4)
    while True:
        ready, _, _ = select.select([server], [], [], 5)
        if monitor.child.poll() is not None:
            write_state("failed the monitor ended: %s" % error_tail())
            return
        if not ready:
            continue
        connection, _ = server.accept()
        with connection:
            command = connection.recv(64).decode().strip()
            if command == "start":
                answer = monitor.start()
            elif command == "drain":
                answer = monitor.drain()
            elif command == "stop":
                monitor.stop()
                write_state("failed stopped on request")
                connection.sendall(b"stopped\n")
                return
            else:
                answer = "unknown command"
            connection.sendall(answer.encode() + b"\n")


def error_tail():
    try:
        with open(RUN + "/tracer.err", "rb") as handle:
            lines = [line for line in handle.read().decode(errors="replace").splitlines() if line.strip()]
        return " | ".join(lines[-3:]) or "no message"
    except OSError:
        return "no message"


def main():
    # Its own process group, the monitor included: init.sh ends both if they are not ready in time.
    os.setsid()
    os.makedirs(RUN, exist_ok=True)
    with open(RUN + "/tracer.pid", "w") as handle:
        handle.write("%d\n" % os.getpid())
    started = time.time()
    try:
        monitor = Monitor()
    except Exception as error:
        write_state("failed %r" % error)
        return 1
    ready = monitor.answer(LOAD_TIMEOUT)
    if not ready or ready.get("ctl") != "ready":
        monitor.child.kill()
        write_state("failed the monitor did not load: %s" % error_tail())
        return 1
    print("nestbox tracer: monitor loaded and attached in %.1f s" % (time.time() - started), flush=True)
    write_state("ready monitor")
    serve(monitor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
