"""The sample supervisor in the guest, as on a linux machine: nestbox's native/supervisor.c (baked into
the image) answers the sample's seccomp notifications, so long sleeps return at once, programs the sample
runs and files it deletes are copied before they can vanish, and, with `memory`, each exiting process
waits here until it is dumped.

The sample's first process runs nestbox's init as `init --exec COMMAND`: it installs the notifying filter,
hands the listener to the supervisor over a socket pair (the init's end at descriptor 6, the supervisor's
at 3) and becomes the command. Every process of the sample inherits the filter. The supervisor writes a
JSON line per event; this module turns them into analysis log lines, uploads and the record the host
keeps as logs/supervisor.jsonl.
"""

import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time

SUPERVISOR = "/usr/lib/nestbox/supervisor"
LAUNCHER = "/usr/lib/nestbox/init"
# On disk, not in /run (memory): the copies may be large. Never walked for dropped files.
CAPTURES = "/var/lib/nestbox/captured"
SUPERVISOR_ERRORS = "/run/nestbox/supervisor.err"
# Where native/supervisor.c and native/init.c expect their ends of the socket pair.
SUPERVISOR_FD = 3
LAUNCHER_FD = 6
STOP_TIMEOUT = 5
REASON_TEXT = {"exec": "executed", "delete": "deleted"}


def available():
    return os.access(SUPERVISOR, os.X_OK) and os.access(LAUNCHER, os.X_OK)


class HeldDescriptors:
    """Keeps descriptors 3 to 6 of the analyzer busy while children are started: Python's own pipe to
    a starting child then never takes the number a child's socket end is moved to."""

    def __enter__(self):
        self.held = []
        while not self.held or self.held[-1] < LAUNCHER_FD:
            self.held.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
        return self

    def __exit__(self, *_):
        for fd in self.held:
            os.close(fd)


def moved_to(fd, number, then=None):
    """A preexec_fn that puts `fd` at `number` in the child (pass `number` in pass_fds)."""

    def preexec():
        if then is not None:
            then()
        os.dup2(fd, number)

    return preexec


class Supervision:
    """One task's supervisor: start() before the sample, launch() to wrap its command, finish() after."""

    def __init__(self, config, channels, own_dir, dump):
        self.channels = channels
        self.dump = dump
        self.own_dir = own_dir
        settings = config.get("supervisor") or {}
        self.threshold_ms = int(settings.get("sleep_threshold_ms", 10000))
        self.limits = config.get("dropped_files") or {}
        self.exits = bool(config.get("memory"))
        self.process = None
        self.reader = None
        self.sample_end = None
        self.records = []
        self.captured = []

    def start(self, watch_files):
        """Starts the supervisor, waiting for the sample's first process."""
        shutil.rmtree(CAPTURES, ignore_errors=True)
        os.makedirs(CAPTURES, mode=0o700)
        ours, theirs = socket.socketpair()
        limits = self.limits
        argv = [SUPERVISOR, "0", "-", "-", "-", self.own_dir, CAPTURES, str(self.threshold_ms),
                str(int(limits.get("max_file_size", 50 << 20))), str(int(limits.get("max_total_size", 200 << 20))),
                str(int(limits.get("max_files", 1000))), "1" if self.exits else "0", "1" if watch_files else "0"]
        with open(SUPERVISOR_ERRORS, "wb") as errors, HeldDescriptors():
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                            pass_fds=(SUPERVISOR_FD,), preexec_fn=moved_to(ours.fileno(), SUPERVISOR_FD))
        ours.close()
        self.sample_end = theirs
        # The supervisor counts as the sample's what changes from now on, to the kernel's coarse clock:
        # a tick goes by first, so the sample's file, made executable just before, is not among it.
        time.sleep(0.02)
        self.process.stdin.write(b"begin\n")
        self.process.stdin.flush()
        self.reader = threading.Thread(target=self.follow, daemon=True)
        self.reader.start()

    def launch(self, command, enter_group):
        """The package's command as the sample's first process runs it, and its Popen arguments. A
        supervisor that already ended (it refused its arguments) would leave the hand-off writing to a
        closed socket: the command then runs unsupervised."""
        if self.process.poll() is not None:
            self.channels.say("the supervisor ended before the sample started (exit %d): sleeps run as asked" % self.process.returncode)
            return command, {"preexec_fn": enter_group}
        options = {"pass_fds": (LAUNCHER_FD,), "preexec_fn": moved_to(self.sample_end.fileno(), LAUNCHER_FD, enter_group)}
        return [LAUNCHER, "--exec"] + command, options

    def started(self):
        """The sample's first process holds its end now."""
        self.sample_end.close()

    def follow(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            handler = getattr(self, "on_" + str(event.get("event")), None)
            if handler is not None:
                try:
                    handler(event)
                except (KeyError, TypeError, ValueError, OSError) as error:
                    self.channels.say("supervisor: %r on %s" % (error, line.decode(errors="replace").strip()))

    def on_sleep(self, event):
        self.records.append({"event": "sleep", "pid": event["pid"], "call": event["call"], "seconds": event["seconds"], "time": event["time"]})
        self.channels.say("process %d asked to sleep %s s (%s): the sleep returned at once" % (event["pid"], number(event["seconds"]), event["call"]))

    def on_unrecorded(self, event):
        """At its end: the shortened calls past its records, counted by process and call."""
        self.records.append({"event": "unrecorded", "pid": event["pid"], "call": event["call"], "count": event["count"]})
        self.channels.say("%d more %s of process %d were shortened (counted, not each recorded)" % (event["count"], event["call"] or "calls", event["pid"]))

    def on_capture(self, event):
        copy = os.path.join(CAPTURES, os.path.basename(event["file"]))
        self.captured.append({"path": event["path"], "copy": copy, "size": int(event["size"]), "sha256": event["sha256"]})
        self.records.append({"event": "capture", "reason": event["reason"], "pid": event["pid"], "filepath": event["path"],
                             "size": event["size"], "sha256": event["sha256"]})
        self.channels.say("captured %s (%d bytes) as process %d %s it" % (event["path"], event["size"], event["pid"], REASON_TEXT.get(event["reason"], event["reason"])))

    def on_missed(self, event):
        self.channels.say("the %s of %s by process %d was not captured: %s" % (event["reason"], event["path"], event["pid"], event["error"]))

    def on_exit(self, event):
        """The process waits in its exit_group until the answer."""
        try:
            self.dump(int(event["pid"]))
        finally:
            self.process.stdin.write(b"done\n")
            self.process.stdin.flush()

    def finish(self):
        """After the sample: the supervisor ends once no process holds the filter (or is ended here)."""
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(STOP_TIMEOUT)
        if self.process.returncode not in (0, -9):
            with open(SUPERVISOR_ERRORS, "rb") as errors:
                message = errors.read().decode(errors="replace").strip() or "no message"
            self.channels.say("the supervisor stopped (exit %d): %s" % (self.process.returncode, message))

    def captures_to_upload(self):
        """(size, guest path, copy) of the captured files whose content is not also their path's at the end."""
        for capture in self.captured:
            if not os.path.isfile(capture["copy"]) or same_content(capture["path"], capture["size"], capture["sha256"]):
                continue
            yield capture["size"], capture["path"], capture["copy"]

    def record(self):
        return "".join(json.dumps(line) + "\n" for line in self.records).encode()


def same_content(path, size, sha256):
    try:
        if os.path.islink(path) or os.path.getsize(path) != size:
            return False
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest() == sha256
    except OSError:
        return False


def number(value):
    """Seconds as JavaScript prints them (90, not 90.0), as the linux machine's log line has them."""
    text = "%.3f" % float(value)
    return text.rstrip("0").rstrip(".")
