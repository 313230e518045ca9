#!/usr/bin/env python3
"""nestbox guest agent: the HTTP API of Cuckoo Sandbox 2.0's agent (version 0.9), written for Python 3.

The host drives the analysis through it: it stores files, extracts the analyzer, runs commands and
polls the analysis status the analyzer reports. Every answer is a JSON object with a "message"; errors
also carry "error_code". Requests are served concurrently, so /status answers while a command runs.
"""

import email.parser
import email.policy
import json
import os
import platform
import re
import runpy
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import traceback
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO

AGENT_VERSION = "0.9"
AGENT_FEATURES = ["execpy", "pinning", "logs", "largefile", "unicodepath"]

state = {}
state_lock = threading.Lock()
agent_log = []


class Reply:
    def __init__(self, status, body=None, path=None):
        self.status = status
        self.body = body
        self.path = path


def success(message, **values):
    return Reply(200, dict(message=message, **values))


def failure(code, message):
    return Reply(code, {"message": message, "error_code": code})


def exception(message):
    agent_log.append(traceback.format_exc())
    return Reply(500, {"message": message, "error_code": 500, "traceback": traceback.format_exc()})


def parse_form(content_type, body):
    """Splits a multipart/form-data or urlencoded body into text fields and file parts (bytes)."""
    form, files = {}, {}
    if content_type.startswith("multipart/form-data"):
        head = ("Content-Type: %s\r\n\r\n" % content_type).encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name is None:
                continue
            payload = part.get_payload(decode=True) or b""
            if part.get_filename() is not None:
                files[name] = payload
            else:
                form[name] = payload.decode("utf8", "replace")
    elif content_type.startswith("application/x-www-form-urlencoded"):
        from urllib.parse import parse_qsl

        form.update(parse_qsl(body.decode("utf8", "replace"), keep_blank_values=True))
    return form, files


def text(output):
    return None if output is None else output.decode("utf8", "replace")


def route_index(request):
    return success("Cuckoo Agent!", version=AGENT_VERSION, features=AGENT_FEATURES)


def route_get_status(request):
    with state_lock:
        return success("Analysis status", status=state.get("status"), description=state.get("description"))


def route_set_status(request):
    if "status" not in request.form:
        return failure(400, "No status has been provided")
    with state_lock:
        state["status"] = request.form["status"]
        state["description"] = request.form.get("description")
    return success("Analysis status updated")


def route_logs(request):
    return success("Agent logs", stdout="", stderr="\n".join(agent_log))


def route_system(request):
    return success("System", system=platform.system())


def route_environ(request):
    return success("Environment variables", environ=dict(os.environ))


def route_path(request):
    return success("Agent path", filepath=os.path.abspath(__file__))


def route_mkdir(request):
    if "dirpath" not in request.form:
        return failure(400, "No dirpath has been provided")
    try:
        os.makedirs(request.form["dirpath"], mode=int(request.form.get("mode", "511")))
    except Exception:
        return exception("Error creating directory")
    return success("Successfully created directory")


def route_mktemp(request):
    try:
        fd, filepath = tempfile.mkstemp(
            suffix=request.form.get("suffix", ""),
            prefix=request.form.get("prefix", "tmp"),
            dir=request.form.get("dirpath"),
        )
        os.close(fd)
    except Exception:
        return exception("Error creating temporary file")
    return success("Successfully created temporary file", filepath=filepath)


def route_mkdtemp(request):
    try:
        dirpath = tempfile.mkdtemp(
            suffix=request.form.get("suffix", ""),
            prefix=request.form.get("prefix", "tmp"),
            dir=request.form.get("dirpath"),
        )
    except Exception:
        return exception("Error creating temporary directory")
    return success("Successfully created temporary directory", dirpath=dirpath)


def route_store(request):
    if "filepath" not in request.form:
        return failure(400, "No filepath has been provided")
    if "file" not in request.files:
        return failure(400, "No file has been provided")
    try:
        with open(request.form["filepath"], "wb") as stored:
            stored.write(request.files["file"])
    except Exception:
        return exception("Error storing file")
    return success("Successfully stored file")


def route_retrieve(request):
    if "filepath" not in request.form:
        return failure(400, "No filepath has been provided")
    return Reply(200, path=request.form["filepath"])


def route_extract(request):
    if "dirpath" not in request.form:
        return failure(400, "No dirpath has been provided")
    if "zipfile" not in request.files:
        return failure(400, "No zip file has been provided")
    try:
        with zipfile.ZipFile(BytesIO(request.files["zipfile"])) as archive:
            archive.extractall(request.form["dirpath"])
    except Exception:
        return exception("Error extracting zip file")
    return success("Successfully extracted zip file")


def route_remove(request):
    path = request.form.get("path")
    if path is None:
        return failure(400, "No path has been provided")
    try:
        if os.path.isdir(path):
            shutil.rmtree(path)
            return success("Successfully deleted directory")
        if os.path.isfile(path):
            os.chmod(path, stat.S_IWRITE | stat.S_IREAD)
            os.remove(path)
            return success("Successfully deleted file")
    except Exception:
        return exception("Error removing file or directory")
    return failure(404, "Path provided does not exist")


def run(request, command, shell):
    cwd = request.form.get("cwd") or None
    if "async" in request.form:
        # A session of its own, so the command outlives the agent if a sample kills it.
        subprocess.Popen(command, shell=shell, cwd=cwd, start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return success("Successfully executed command", stdout=None, stderr=None)
    finished = subprocess.run(command, shell=shell, cwd=cwd, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return success("Successfully executed command", stdout=text(finished.stdout), stderr=text(finished.stderr))


def route_execute(request):
    if "command" not in request.form:
        return failure(400, "No command has been provided")
    shell = "shell" in request.form
    command = request.form["command"]
    try:
        return run(request, command if shell else split_command(command), shell)
    except Exception:
        return exception("Error executing command")


def route_execpy(request):
    if "filepath" not in request.form:
        return failure(400, "No Python file has been provided")
    try:
        if "async" in request.form:
            run_python_forked(request.form["filepath"], request.form.get("cwd") or None)
            return success("Successfully executed command", stdout=None, stderr=None)
        return run(request, [sys.executable, request.form["filepath"]], False)
    except Exception:
        return exception("Error executing command")


def run_python_forked(filepath, cwd):
    """Runs a Python file in a forked child of the agent, in a session of its own. The child starts
    with the agent's modules loaded and its code warm, which saves seconds in an emulated guest."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            # The agent's sockets stay with the agent: a respawned agent must be able to listen again.
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
            if cwd:
                os.chdir(cwd)
            sys.argv = [filepath]
            # As `python3 FILE` would: the file's folder comes first on the import path.
            sys.path.insert(0, os.path.dirname(os.path.abspath(filepath)))
            runpy.run_path(filepath, run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0
        finally:
            os._exit(code)
    threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True).start()


def split_command(command):
    import shlex

    return shlex.split(command)


def route_pinning(request):
    with state_lock:
        if "client_ip" in state:
            return failure(500, "Agent has already been pinned to an IP!")
        state["client_ip"] = request.client_ip
    return success("Successfully pinned Agent", client_ip=request.client_ip)


def route_kill(request):
    threading.Thread(target=request.server.shutdown, daemon=True).start()
    return success("Quit the Cuckoo Agent")


ROUTES = {
    "GET": [
        ("/", route_index), ("/status", route_get_status), ("/logs", route_logs), ("/system", route_system),
        ("/environ", route_environ), ("/path", route_path), ("/mktemp", route_mktemp),
        ("/mkdtemp", route_mkdtemp), ("/pinning", route_pinning), ("/kill", route_kill),
    ],
    "POST": [
        ("/status", route_set_status), ("/mkdir", route_mkdir), ("/mktemp", route_mktemp),
        ("/mkdtemp", route_mkdtemp), ("/store", route_store), ("/retrieve", route_retrieve),
        ("/extract", route_extract), ("/remove", route_remove), ("/execute", route_execute),
        ("/execpy", route_execpy),
    ],
}


class Handler(BaseHTTPRequestHandler):
    server_version = "Cuckoo Agent"
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        self.serve({}, {})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            form, files = parse_form(self.headers.get("Content-Type", ""), body)
        except Exception:
            return self.send(exception("Malformed request body"))
        self.serve(form, files)

    def serve(self, form, files):
        self.form, self.files = form, files
        self.client_ip = self.client_address[0]
        with state_lock:
            pinned = state.get("client_ip")
        if pinned is not None and pinned != self.client_ip:
            # A pinned agent ignores everybody else, as Cuckoo's does: no answer at all.
            self.close_connection = True
            return
        path = self.path.split("?", 1)[0]
        for pattern, handler in ROUTES.get(self.command, []):
            if re.fullmatch(pattern, path):
                return self.send(handler(self))
        self.send(failure(404, "Route not found"))

    def send(self, reply):
        if reply.path is not None:
            return self.send_file(reply.path)
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_file(self, path):
        if not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.end_headers()
        with open(path, "rb") as source:
            shutil.copyfileobj(source, self.wfile, 1024 * 1024)

    def log_message(self, format, *args):
        pass


def main():
    host = sys.argv[1] if len(sys.argv) > 1 else "0.0.0.0"
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    ThreadingHTTPServer.allow_reuse_address = True
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer((host, port), Handler).serve_forever()


if __name__ == "__main__":
    main()
