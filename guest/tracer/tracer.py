#!/usr/bin/env python3
"""nestbox's behaviour tracer inside the guest: bpftrace on syscall and sched tracepoints, filtered to
the sample's cgroup, so nothing ptraces the sample.

init.sh starts it once per image, at boot, before the host saves the machine's memory: compiling and
attaching the program costs minutes under TCG, so it is done then, and every task restored from that
memory finds it attached and armed. The program (`behaviour.bt`) is written by the host with the same
generator as the host's own eBPF tracer, and the host decodes its output with the same parser.

It writes bpftrace's output, as it comes, to the virtio-serial port org.nestbox.trace, and answers the
analyzer on a unix socket, one command per connection:
  start   write the stream header (the host learns the format, the record marker and the clock offset)
  drain   stop recording, wait until bpftrace has read every CPU's buffer and printed its write totals
  stop    end bpftrace and free the port (the analyzer then traces with strace)
/run/nestbox/tracer.state says "ready <probes>" once armed, or "failed <reason>".
"""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

HERE = "/usr/lib/nestbox/tracer"
RUN = "/run/nestbox"
STATE = RUN + "/tracer.state"
SOCKET = RUN + "/tracer.sock"
CGROUP = "/sys/fs/cgroup/nestbox-sample"
TRACEFS = "/sys/kernel/tracing"
PORT_NAME = "org.nestbox.trace"
ATTACH_TIMEOUT = 900
ANSWER_TIMEOUT = 30
F_SETPIPE_SZ = 1031
READ_BYTES = 1 << 16


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


def online_cpus():
    cpus = []
    with open("/sys/devices/system/cpu/online") as handle:
        for part in handle.read().strip().split(","):
            first, _, last = part.partition("-")
            cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def used_events_file():
    """bpftrace re-reads available_events for every probe: a copy with only the program's own
    tracepoints saves minutes under TCG (bind-mounted over the original in bpftrace's namespace)."""
    with open(os.path.join(HERE, "tracepoints")) as handle:
        wanted = set(line.strip() for line in handle if line.strip())
    with open(TRACEFS + "/available_events") as handle:
        kept = [line for line in handle if line.strip() in wanted]
    path = RUN + "/tracer-events"
    with open(path, "w") as handle:
        handle.writelines(kept)
    return path


class Tracer:
    def __init__(self, config):
        self.marker = config["marker"].encode()
        self.nonce = int(config["nonce"])
        self.port = os.open(port_device(PORT_NAME), os.O_WRONLY)
        os.makedirs(CGROUP, exist_ok=True)
        self.cgroup_id = os.stat(CGROUP).st_ino
        events = used_events_file()
        env = dict(os.environ, **{key: str(value) for key, value in config["env"].items()})
        self.stderr = open(RUN + "/tracer.err", "wb")
        self.child = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c",
             'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", events, TRACEFS + "/available_events",
             "bpftrace", "-B", "line", "--no-warnings", os.path.join(HERE, "behaviour.bt"), str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        try:
            os.setpriority(os.PRIO_PROCESS, self.child.pid, -10)
        except OSError:
            pass
        self.output = self.child.stdout.fileno()
        try:
            import fcntl
            fcntl.fcntl(self.output, F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
        self.pending = b""
        self.answers = {}
        self.probes = 0
        # Nothing is sent before the header: at boot no host reads the port (and the sample has not run).
        self.forwarding = False

    def pump(self, timeout):
        """Forwards what bpftrace printed (whole lines only, so nothing else lands inside one) and notes
        the program's own answers (`<marker> r 0 0 0 <which> <value>`)."""
        ready, _, _ = select.select([self.output], [], [], timeout)
        if not ready:
            return True
        chunk = os.read(self.output, READ_BYTES)
        if not chunk:
            return False
        data = self.pending + chunk
        end = data.rfind(b"\n") + 1
        self.pending = data[end:]
        if end:
            self.note_answers(data[:end])
            view = memoryview(data[:end]) if self.forwarding else memoryview(b"")
            while view:
                view = view[os.write(self.port, view):]
        return True

    def note_answers(self, lines):
        tag = self.marker + b" r 0 0 0 "
        at = lines.find(tag)
        while at >= 0:
            if at == 0 or lines[at - 1] == 10:
                fields = lines[at + len(tag):lines.find(b"\n", at)].split()
                if len(fields) == 2:
                    self.answers.setdefault(int(fields[0]), set()).add(int(fields[1]))
            at = lines.find(tag, at + 1)
        if self.probes == 0:
            attaching = lines.find(b"Attaching ")
            if attaching >= 0:
                self.probes = int(lines[attaching:].split()[1])

    def until(self, done, poke, timeout):
        deadline = time.time() + timeout
        while not done():
            if time.time() > deadline or self.child.poll() is not None:
                return False
            poke()
            if not self.pump(0.2):
                return False
        return True

    def launch(self):
        """Waits until every probe is attached (both readiness probes answered our kill(self, 0)), then
        arms the program with the sample cgroup (pread64 on the nonce, a descriptor that cannot exist)."""
        me = os.getpid()
        attached = lambda: {1, 2} <= set(self.answers)
        if not self.until(attached, lambda: os.kill(me, 0), ATTACH_TIMEOUT):
            return False
        return self.until(lambda: self.cgroup_id in self.answers.get(3, ()), lambda: self.arm(), ANSWER_TIMEOUT)

    def arm(self):
        try:
            os.pread(self.nonce, 1, self.cgroup_id)
        except OSError:
            pass

    def signal_nonce(self, sig):
        try:
            os.kill(self.nonce, sig)
        except OSError:
            pass

    def header(self):
        offset = time.time_ns() - time.monotonic_ns()
        line = b"nestbox-trace ebpf %s %d %d\n" % (self.marker, offset, self.probes)
        os.write(self.port, line)
        self.forwarding = True

    def drain(self):
        """A kill(nonce, 0) from every CPU stops recording and leaves a marker in that CPU's buffer;
        bpftrace reads each buffer in order, so once every marker is through, so is every record. Then
        kill(nonce, SIGCONT) prints the write totals no close reported."""
        cpus = online_cpus()
        everywhere = os.sched_getaffinity(0)
        for cpu in cpus:
            try:
                os.sched_setaffinity(0, {cpu})
                self.signal_nonce(0)
            except OSError:
                pass
        os.sched_setaffinity(0, everywhere)
        drained = self.until(lambda: set(cpus) <= self.answers.get(4, set()), lambda: None, ANSWER_TIMEOUT)
        dumped = self.until(lambda: 5 in self.answers, lambda: self.signal_nonce(signal.SIGCONT), ANSWER_TIMEOUT)
        return drained and dumped

    def stop(self):
        self.child.kill()
        self.child.wait()
        os.close(self.port)


def serve(tracer):
    try:
        os.unlink(SOCKET)
    except OSError:
        pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(SOCKET)
    os.chmod(SOCKET, 0o600)
    server.listen(4)
    while True:
        ready, _, _ = select.select([server, tracer.output], [], [], 5)
        if tracer.output in ready and not tracer.pump(0):
            write_state("failed bpftrace ended: %s" % error_tail())
            os.close(tracer.port)
            return
        if server in ready:
            connection, _ = server.accept()
            with connection:
                command = connection.recv(64).decode().strip()
                if command == "start":
                    tracer.header()
                    connection.sendall(b"ok ebpf %d\n" % tracer.probes)
                elif command == "drain":
                    connection.sendall(b"drained\n" if tracer.drain() else b"incomplete\n")
                elif command == "stop":
                    tracer.stop()
                    write_state("failed stopped on request")
                    connection.sendall(b"stopped\n")
                    return
                else:
                    connection.sendall(b"unknown command\n")


def error_tail():
    try:
        with open(RUN + "/tracer.err", "rb") as handle:
            lines = [line for line in handle.read().decode(errors="replace").splitlines()
                     if line.strip() and "RLIMIT_MEMLOCK" not in line]
        return " | ".join(lines[-3:]) or "no message"
    except OSError:
        return "no message"


def main():
    # Its own process group, bpftrace included: the analyzer ends both if they are not ready in time.
    os.setsid()
    os.makedirs(RUN, exist_ok=True)
    with open(RUN + "/tracer.pid", "w") as handle:
        handle.write("%d\n" % os.getpid())
    started = time.time()
    try:
        with open(os.path.join(HERE, "tracer.json")) as handle:
            config = json.load(handle)
        tracer = Tracer(config)
    except Exception as error:
        write_state("failed %r" % error)
        return 1
    print("nestbox tracer: bpftrace %d started, compiling and attaching" % tracer.child.pid, flush=True)
    if not tracer.launch():
        tracer.child.kill()
        write_state("failed bpftrace did not attach: %s" % error_tail())
        return 1
    print("nestbox tracer: %d probes attached and armed in %.0f s" % (tracer.probes, time.time() - started), flush=True)
    write_state("ready %d" % tracer.probes)
    serve(tracer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
