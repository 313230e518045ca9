#!/usr/bin/env python3
"""nestbox's Linux analyzer: runs one sample inside the guest and sends what it does to the host.

The host uploads this folder through the agent (/extract), stores the sample and analysis.json beside
it, and starts it with the agent's /execpy (or `python3 analyzer.py [analysis.json]`). It then
  - sets the clock, reseeds the random pool and configures the analysis network card,
  - runs the analysis package (packages.py, following the host's catalogue) in the sample cgroup, traced by the guest's eBPF tracer (guest/tracer,
    attached before the host saved the machine's memory), or under strace when that tracer is not
    there; either writes its trace straight into a virtio-serial port (so a sample that deletes files
    or kills the analyzer cannot take back what was already sent),
  - under nestbox's sample supervisor where the image has it (supervision.py): long sleeps cut short,
    executed and deleted files captured, exiting processes dumped with `memory`,
  - copies the sample's output to the analysis log port and to the screen,
  - at the end (every process gone, or the timeout) dumps the memory of live processes when asked,
    uploads the files the sample created or changed, and reports "complete" to the agent.
"""

import errno
import http.client
import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

import supervision
from packages import package_command

AGENT = ("127.0.0.1", 8000)
TRACER_SOCKET = "/run/nestbox/tracer.sock"
TRACER_STATE = "/run/nestbox/tracer.state"
TRACER_PID = "/run/nestbox/tracer.pid"
# Where samples may leave files worth keeping. The libraries and shared data under /usr are left out:
# walking them costs seconds under TCG (/bin and /sbin are links into /usr).
DROPPED_ROOTS = ["/tmp", "/root", "/home", "/etc", "/var", "/opt", "/usr/local", "/dev/shm", "/srv", "/usr/bin", "/usr/sbin"]
SKIPPED_ROOTS = ["/proc", "/sys", "/dev/pts", "/run", supervision.CAPTURES]


def port_device(name):
    """The /dev node of the virtio-serial port called `name`."""
    for port in os.listdir("/sys/class/virtio-ports"):
        with open("/sys/class/virtio-ports/%s/name" % port) as handle:
            if handle.read().strip() == name:
                return "/dev/" + port
    raise RuntimeError("no virtio-serial port named " + name)


def write_all(port, data):
    """Ports take a few KiB per write: loop until everything went."""
    view = memoryview(data)
    while view:
        written = port.write(view)
        view = view[written:]


class Channels:
    def __init__(self):
        self.trace = port_device("org.nestbox.trace")
        self.log = open(port_device("org.nestbox.log"), "wb", buffering=0)
        self.files = open(port_device("org.nestbox.files"), "wb", buffering=0)
        self.lock = threading.Lock()

    def say(self, message):
        self.write_log(("[analyzer %.3f] %s\n" % (time.time(), message)).encode())

    def write_log(self, data):
        with self.lock:
            write_all(self.log, data)

    def upload(self, header, path=None, data=None, limit=None):
        """One upload: a JSON header line with the size, then exactly that many bytes (a file's first
        `limit` bytes at most). A file is opened before its header goes out, so one that cannot be
        opened costs nothing on the link."""
        if data is not None:
            self.send(header, len(data), [data])
            return
        with open(path, "rb") as source:
            size = os.fstat(source.fileno()).st_size
            if limit is not None:
                size = min(size, limit)
            self.send(header, size, file_chunks(source, size))

    def send(self, header, size, chunks):
        with self.lock:
            write_all(self.files, (json.dumps(dict(header, size=size)) + "\n").encode())
            sent = 0
            for chunk in chunks:
                write_all(self.files, chunk)
                sent += len(chunk)
            while sent < size:
                # The file shrank or failed while being read: pad, so the stream stays in step.
                padding = min(1 << 20, size - sent)
                write_all(self.files, b"\0" * padding)
                sent += padding

    def close(self):
        """Tells the host that every upload is complete."""
        with self.lock:
            write_all(self.files, b'{"kind": "end"}\n')


def file_chunks(source, size):
    """Up to `size` bytes of an open file, a MiB at a time; stops early at its end or a read error."""
    sent = 0
    while sent < size:
        try:
            chunk = source.read(min(1 << 20, size - sent))
        except OSError:
            return
        if not chunk:
            return
        yield chunk
        sent += len(chunk)


def set_status(status, description=""):
    """Tells the agent, which the host polls (http.client: the agent has it loaded already)."""
    body = urllib.parse.urlencode({"status": status, "description": description})
    try:
        connection = http.client.HTTPConnection(*AGENT, timeout=10)
        connection.request("POST", "/status", body, {"Content-Type": "application/x-www-form-urlencoded"})
        connection.getresponse().read()
        connection.close()
    except Exception:
        pass


def prepare_machine(config, channels):
    if config.get("clock"):
        time.clock_settime(time.CLOCK_REALTIME, float(config["clock"]))
    if config.get("entropy"):
        with open("/dev/urandom", "wb") as pool:
            pool.write(bytes.fromhex(config["entropy"]))
    network = config.get("network")
    if network:
        configure_network(network, channels)


def configure_network(network, channels):
    interface = None
    for name in os.listdir("/sys/class/net"):
        with open("/sys/class/net/%s/address" % name) as handle:
            if handle.read().strip() == network["mac"]:
                interface = name
    if interface is None:
        channels.say("no network card with address %s" % network["mac"])
        return
    try:
        # No IPv6 on the analysis card: router solicitations would only clutter the capture.
        with open("/proc/sys/net/ipv6/conf/%s/disable_ipv6" % interface, "w") as ipv6:
            ipv6.write("1")
    except OSError:
        pass
    for command in (
        ["ip", "addr", "flush", "dev", interface],
        ["ip", "addr", "add", "%s/%d" % (network["address"], network["prefix"]), "dev", interface],
        ["ip", "link", "set", interface, "up"],
        ["ip", "route", "replace", "default", "via", network["gateway"], "dev", interface],
    ):
        subprocess.run(command, check=False)
    with open("/etc/resolv.conf", "w") as resolv:
        resolv.write("nameserver %s\n" % network["dns"])


def tracer_request(command, timeout):
    """One command to the guest's eBPF tracer; its one-line answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(TRACER_SOCKET)
        connection.sendall(command.encode() + b"\n")
        return connection.makefile("rb").readline().decode().strip()


def choose_tracer(config, channels):
    """'ebpf' when the guest's tracer is armed (and not refused by the task option tracer=strace), else
    'strace' once the trace port is free for it; None when the host asked for no behaviour trace."""
    if config.get("strace") is None:
        return None
    wanted = (config.get("options") or {}).get("tracer", "")
    try:
        with open(TRACER_STATE) as handle:
            state = handle.read().strip()
    except OSError:
        state = "failed no eBPF tracer in this guest"
    if state.startswith("ready") and wanted != "strace":
        try:
            answer = tracer_request("start", 30)
            if answer.startswith("ok ebpf"):
                channels.say("behaviour traced with eBPF (%s)" % answer)
                return "ebpf"
            state = "failed the tracer answered %r" % answer
        except OSError as error:
            state = "failed the tracer did not answer: %s" % error
    reason = "the task chose strace" if wanted == "strace" else "the guest's eBPF tracer is not ready: " + state[len("failed "):]
    if shutil.which("strace") is None:
        channels.say("no behaviour trace: %s, and this guest has no strace" % reason)
        return None
    release_trace_port()
    start_strace_stream(channels, reason)
    channels.say("behaviour traced with strace: %s" % reason)
    return "strace"


def release_trace_port():
    """The eBPF tracer holds the trace port (a port has one reader at a time): it is ended first."""
    try:
        tracer_request("stop", 10)
        return
    except OSError:
        pass
    try:
        with open(TRACER_PID) as handle:
            os.killpg(int(handle.read()), signal.SIGKILL)
    except (OSError, ValueError):
        pass


def start_strace_stream(channels, reason):
    """The stream header, then strace opens the port itself (-o) once this closed it."""
    deadline = time.time() + 10
    while True:
        try:
            port = os.open(channels.trace, os.O_WRONLY)
            break
        except OSError as error:
            if error.errno != errno.EBUSY or time.time() > deadline:
                raise
            time.sleep(0.1)
    try:
        write_all_fd(port, ("nestbox-trace strace %s\n" % reason.replace("\n", " ")).encode())
    finally:
        os.close(port)


def write_all_fd(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def drain_tracer(tracer, channels):
    """The eBPF tracer's last records and write totals are sent before the analysis reports its end."""
    if tracer != "ebpf":
        return
    try:
        answer = tracer_request("drain", 90)
    except OSError as error:
        answer = "no answer: %s" % error
    if answer != "drained":
        channels.say("the eBPF tracer did not confirm its last records: %s" % answer)


def start_supervisor(config, channels, own_dir, tracer):
    """The sample's supervisor, where the image and the host's configuration have it. Not watching
    executions and deletions under strace: its own seccomp filter traces these calls, and a notification
    would take precedence over its trace stop."""
    if not config.get("supervisor") or not supervision.available():
        channels.say("no sample supervisor in this guest: sleeps run as asked")
        return None
    supervisor = supervision.Supervision(config, channels, own_dir, lambda pid: dump_process_memory(pid, channels))
    supervisor.start(watch_files=tracer != "strace")
    channels.say("the sample runs under nestbox's supervisor (sleeps over %d ms end at once)" % supervisor.threshold_ms)
    return supervisor


def run_package(config, channels, command, group, tracer, supervisor):
    """Runs the package in the sample's cgroup (under strace for that tracer, through the supervisor's
    hand-off when there is one); returns (process, reader thread)."""
    # The host chooses strace's options: it parses what they produce.
    strace = ["strace"] + config["strace"] + ["-o", channels.trace, "--"] if tracer == "strace" else []
    channels.say("running: %s" % " ".join(command))
    launch = supervisor.launch(command, group.enter) if supervisor else (command, {"preexec_fn": group.enter})
    with supervision.HeldDescriptors():
        process = subprocess.Popen(strace + launch[0], cwd="/tmp", stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                   **launch[1])
    if supervisor:
        supervisor.started()
    reader = threading.Thread(target=copy_output, args=(process.stdout, channels), daemon=True)
    reader.start()
    return process, reader


def copy_output(stream, channels):
    """The sample's output goes to the analysis log and to the console the screenshots show."""
    try:
        console = open("/dev/tty1", "wb", buffering=0)
    except OSError:
        console = None
    for line in iter(stream.readline, b""):
        channels.write_log(line)
        if console is not None:
            try:
                console.write(line.replace(b"\n", b"\r\n"))
            except OSError:
                pass


class SampleGroup:
    """The cgroup the package runs in: it holds every process the sample starts, daemons included."""

    def __init__(self):
        self.path = "/sys/fs/cgroup/nestbox-sample"
        os.makedirs(self.path, exist_ok=True)

    def enter(self):
        with open(self.path + "/cgroup.procs", "w") as procs:
            procs.write(str(os.getpid()))

    def pids(self):
        try:
            with open(self.path + "/cgroup.procs") as procs:
                return [int(line) for line in procs if line.strip()]
        except OSError:
            return []

    def freeze(self):
        try:
            with open(self.path + "/cgroup.freeze", "w") as freeze:
                freeze.write("1")
        except OSError:
            pass

    def kill(self):
        try:
            with open(self.path + "/cgroup.kill", "w") as kill:
                kill.write("1")
        except OSError:
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def dump_process_memory(pid, channels):
    """Cuckoo's process dump layout: per readable region a 24-byte header (address, size, state,
    type, protection, little-endian) and the region's bytes."""
    chunks = []
    try:
        with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", buffering=0) as memory:
            for line in maps:
                fields = line.split()
                start, end = (int(value, 16) for value in fields[0].split("-"))
                perms = fields[1]
                if perms[0] != "r" or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
                    continue
                try:
                    memory.seek(start)
                    data = memory.read(end - start)
                except (OSError, ValueError, OverflowError):
                    continue
                mapped = len(fields) > 5 and fields[5].startswith("/")
                kind = 0x1000000 if mapped else (0x40000 if perms[3] == "s" else 0x20000)
                chunks.append(struct.pack("<QIIII", start, len(data), 0x1000, kind, protection(perms)) + data)
    except OSError:
        return
    channels.upload({"kind": "procmem", "pid": pid}, data=b"".join(chunks))


def protection(perms):
    readable, writable, executable = perms[0] == "r", perms[1] == "w", perms[2] == "x"
    if executable:
        return 0x40 if writable else (0x20 if readable else 0x10)
    if writable:
        return 0x04
    return 0x02 if readable else 0x01


def wait_for_end(process, group, config, started):
    """Waits until every process of the sample is gone (its cgroup is empty) or the timeout passes."""
    deadline = started + float(config["timeout"])
    gone = lambda: process.poll() is not None and not group.pids()
    while time.time() < deadline:
        if gone() and not config.get("enforce_timeout"):
            return "exited"
        time.sleep(0.2)
    return "exited" if gone() else "timeout"


class DroppedBudget:
    """The host's dropped_files limits (src/machinery/dropped/budget.ts), applied before sending, so
    that what the host would throw away never crosses the link. The host enforces them again."""

    def __init__(self, limits):
        self.max_file_size = int(limits.get("max_file_size", 50 * 1024 * 1024))
        self.left = int(limits.get("max_total_size", 200 * 1024 * 1024))
        self.max_files = int(limits.get("max_files", 1000))
        self.listed = 0
        self.unlisted = 0

    def take(self, size):
        """Bytes to send of a file of `size` bytes (its first ones), or None past max_files."""
        if self.listed >= self.max_files:
            self.unlisted += 1
            return None
        self.listed += 1
        keep = min(size, self.max_file_size, self.left)
        self.left -= keep
        return keep


def upload_dropped_files(config, channels, started, skip, captured=()):
    """Smallest first, as the host's collector does: the task's bytes go to the many small files
    before one filler takes them. Every listed file is announced with its real size, even when none
    of its bytes follow. `captured`: (size, path, copy) of the supervisor's copies, listed at the path
    they ran from or were deleted at."""
    budget = DroppedBudget(config.get("dropped_files") or {})
    at_end = [(size, path, path) for size, path in with_sizes(changed_files(started, skip))]
    for size, path, source in sorted(at_end + list(captured)):
        keep = budget.take(size)
        if keep is None:
            continue
        try:
            channels.upload({"kind": "dropped", "path": path, "file_size": size}, path=source, limit=keep)
        except OSError as error:
            channels.say("cannot upload %s: %s" % (path, error))
    if budget.unlisted:
        channels.say("%d more dropped files than dropped_files.max_files (%d): not listed" % (budget.unlisted, budget.max_files))


def with_sizes(paths):
    """Regular files only: opening a FIFO would block the upload."""
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            yield info.st_size, path


def changed_files(started, skip):
    for root in DROPPED_ROOTS:
        for directory, subdirs, files in os.walk(root):
            subdirs[:] = [name for name in subdirs if os.path.join(directory, name) not in SKIPPED_ROOTS]
            for name in files:
                path = os.path.join(directory, name)
                if path in skip or os.path.islink(path):
                    continue
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if max(info.st_mtime, info.st_ctime) >= started:
                    yield path


class OwnFiles:
    """The analyzer's own files, and files made before the sample ran that count as its own while
    they stay as they were (their size and times)."""

    def __init__(self, paths, unchanged):
        self.paths = set(paths)
        self.stamps = {path: stamp(path) for path in unchanged}

    def __contains__(self, path):
        return path in self.paths or (path in self.stamps and stamp(path) == self.stamps[path])


def stamp(path):
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    config_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "analysis.json")
    with open(config_path) as handle:
        config = json.load(handle)
    own_files = {config_path, os.path.abspath(__file__), "/etc/resolv.conf"}
    own_files.update(os.path.join(here, name) for name in os.listdir(here))
    channels = Channels()
    set_status("running")
    try:
        prepare_machine(config, channels)
        if config["category"] == "file":
            own_files.add(config["target"])
        command, unpacked = package_command(config, channels.say)
        # What the package unpacked is the sample, not what it dropped, unless the sample changes it.
        own_files = OwnFiles(own_files, unpacked)
        started = time.time()
        group = SampleGroup()
        tracer = choose_tracer(config, channels)
        supervisor = start_supervisor(config, channels, here, tracer)
        process, reader = run_package(config, channels, command, group, tracer, supervisor)
        ended = wait_for_end(process, group, config, started)
        channels.say("analysis ended: %s" % ended)
        finishing = time.time()
        if config.get("memory"):
            group.freeze()
            for pid in group.pids():
                if pid != process.pid:
                    dump_process_memory(pid, channels)
        group.kill()
        process.wait()
        reader.join(2)
        if supervisor:
            supervisor.finish()
        drain_tracer(tracer, channels)
        upload_dropped_files(config, channels, started - 1, own_files, supervisor.captures_to_upload() if supervisor else [])
        if supervisor and supervisor.records:
            channels.upload({"kind": "supervisor"}, data=supervisor.record())
        channels.say("results sent in %.1f s" % (time.time() - finishing))
        channels.close()
        set_status("complete", ended)
    except Exception as error:
        channels.say("analysis failed: %r" % error)
        channels.close()
        set_status("failed", str(error))


if __name__ == "__main__":
    main()
