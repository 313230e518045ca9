"""The analysis packages in the guest: the host sends its catalogue (src/analysis/packages, plain data)
with every task, and this module gives it the meaning src/analysis/packages/define.ts gives it on the
host, so that a package runs the same way on a qemu machine as on a linux machine.

The task's configuration names the package the host chose and a context: the target's path or URL,
the words of its `arguments` option and the archive passwords to try, all worked out by the host.
"""

import os
import re
import subprocess

UNPACK_TIMEOUT = 120


class Catalogue:
    def __init__(self, specs):
        self.specs = specs

    def find(self, name):
        for spec in self.specs:
            if spec["name"] == name or name in spec.get("aliases", []):
                return spec
        raise ValueError("unknown analysis package %r" % name)

    def for_file(self, name, file_type):
        """The first package, in the catalogue's order, that recognises this file; None if none does."""
        for spec in self.specs:
            if matches(spec, name, file_type):
                return spec
        return None

    def runnable(self, spec):
        """What runs a file: its package, unless that is none or an archive one (then the kernel decides)."""
        return spec if spec is not None and "unpack" not in spec else self.find("elf")


def matches(spec, name, file_type):
    pattern = spec.get("fileTypes")
    if pattern and re.search(pattern, file_type, re.IGNORECASE):
        return True
    return any(name.lower().endswith(ending) for ending in spec.get("extensions", []))


def expand(template, context, into=""):
    """The command line a template stands for: whole-word placeholders only, as on the host."""
    words = []
    for word in template:
        if word == "{path}":
            words.append(context["path"])
        elif word == "{url}":
            words.append(context["url"])
        elif word == "{into}":
            words.append(into)
        elif word == "{arguments}":
            words.extend(context["arguments"])
        elif word == "{passwords}":
            words.extend(context["passwords"])
        else:
            words.append(word)
    return words


def file_types(paths):
    """libmagic's descriptions, one `file` run for all of them."""
    result = subprocess.run(["file", "--brief", "--no-pad", "--"] + paths, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, LC_ALL="C"), check=False)
    types = result.stdout.decode(errors="replace").split("\n")
    return [types[index] if index < len(types) else "data" for index in range(len(paths))]


def pick_unpacked(catalogue, into, wanted, unpacked=None):
    """The file of an unpacked archive to run and its package: the one the `file` option names, else the
    first (in path order) a package other than an archive one recognises, else the first file.
    `unpacked`: what is in `into` (unpacked_files), when the caller has listed it already."""
    listed = unpacked_files(into) if unpacked is None else unpacked
    paths = [path for path in listed if os.path.isfile(path) and not os.path.islink(path)]
    if not paths:
        raise ValueError("the archive holds no file")
    candidates = []
    for path, file_type in zip(paths, file_types(paths)):
        name = os.path.relpath(path, into)
        candidates.append((name, path, file_type, catalogue.for_file(name, file_type)))
    if wanted:
        named = [c for c in candidates if c[0] == wanted or c[0].endswith("/" + wanted)]
        if not named:
            raise ValueError("the archive holds no file named %r" % wanted)
        chosen = named[0]
    else:
        chosen = next((c for c in candidates if c[3] is not None and "unpack" not in c[3]), candidates[0])
    return chosen[1], chosen[2], catalogue.runnable(chosen[3])


def as_execvp_would(command):
    """A file the kernel cannot start itself (text without a #! line) goes to /bin/sh, as execvp does."""
    try:
        with open(command[0], "rb") as program:
            head = program.read(4)
    except OSError:
        return command
    if head == b"\x7fELF" or head[:2] == b"#!":
        return command
    return ["/bin/sh"] + command


def package_command(config, say):
    """The command line that starts the task's target with the package the host chose, and the files
    made on the way: archives are unpacked first (untraced) and the file picked from them runs with its
    own package."""
    catalogue = Catalogue(config["catalogue"])
    spec = catalogue.find(config["package"])
    url = config["category"] == "url"
    context = {
        "path": "" if url else config["target"],
        "url": config["target"] if url else "",
        "arguments": config.get("arguments") or [],
        "passwords": config.get("passwords") or [""],
    }
    made = []
    unpack = spec.get("unpack")
    if unpack:
        result = subprocess.run(expand(unpack["command"], context, unpack["into"]), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=UNPACK_TIMEOUT, check=False)
        if result.returncode != 0:
            raise ValueError("cannot unpack the archive (exit %d): %s" % (result.returncode, result.stdout.decode(errors="replace").strip()))
        made = unpacked_files(unpack["into"])
        path, file_type, spec = pick_unpacked(catalogue, unpack["into"], (config.get("options") or {}).get("file"), made)
        os.chmod(path, 0o755)
        say("unpacked; running %s (%s) with package %s" % (path, file_type, spec["name"]))
        context["path"] = path
    elif not url and config.get("target"):
        os.chmod(config["target"], 0o755)
    command = expand(spec["command"], context)
    if spec.get("fallback") and not os.path.exists(command[0]):
        say("%s is not in this machine: %s instead" % (command[0], spec["fallback"][0]))
        command = expand(spec["fallback"], context)
    return as_execvp_would(command), made


def unpacked_files(into):
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(into) for name in names)
