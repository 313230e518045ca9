#!/usr/bin/env bash
# Installs what nestbox needs on Debian/Ubuntu, idempotently: Debian packages, npm modules and the build.
#   scripts/setup.sh          what the service needs
#   scripts/setup.sh --test   also what the test suite and benchmarks need
# Runs with no standard input (CI); every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=false
[[ "${1:-}" == "--test" ]] && want_tests=true

# Service: libmagic's `file`, archive tools, ssdeep's reference CLI, a C toolchain for better-sqlite3.
packages=(file libmagic1 p7zip-full bzip2 tar unzip ssdeep python3 make g++ ca-certificates)
# Service: per-task networks (namespaces, nftables rules, capture, the fake internet's TLS certificate).
packages+=(iproute2 nftables tcpdump openssl)
# Service: linux machines (sandbox, guest root built by debootstrap, static init, the sample supervisor (libssl for SHA-256), screenshots).
packages+=(bubblewrap util-linux debootstrap gcc libc6-dev libssl-dev imagemagick)
# Tests: clients run inside task networks (dig, curl, ping) and tshark reads their captures.
$want_tests && packages+=(dnsutils curl iputils-ping tshark)
# Service: qemu machines (QEMU, qcow2 tools; the guest image's initramfs, ext4 root and kernel unpacking;
# debootstrap and imagemagick come with the linux machines above).
packages+=(qemu-system-x86 qemu-utils cpio e2fsprogs xz-utils)
# Service: processing runs YARA rules with the yara CLI.
packages+=(yara)
# Service: the behaviour tracer, nestbox's eBPF monitor (native/monitor: clang, bpftool, libbpf, libelf,
# zlib); strace where eBPF does not work. bpftrace: the benchmark compares the monitor with it.
packages+=(clang bpftool libbpf-dev libelf-dev zlib1g-dev strace)
$want_tests && packages+=(bpftrace)
# Tests: processing compares with binutils, python3-pefile, mingw-built and osslsigncode-signed PEs; busybox pings.
# mingw-w64 also builds the Windows samples (test/fixtures/windows), 32- and 64-bit.
$want_tests && packages+=(binutils gcc-mingw-w64-x86-64 gcc-mingw-w64-i686 python3-pefile osslsigncode busybox)
# Tests: PostgreSQL for the shared-queue mode.
$want_tests && packages+=(postgresql)
# Tests: headless Chromium renders the HTML report.
$want_tests && packages+=(chromium)

log() { printf '[setup] %s\n' "$*" >&2; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo -n "$@"; fi
}

install_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

check_node() {
  if ! command -v node >/dev/null; then
    log "Node.js 20.15 or newer is required (https://nodejs.org or your distribution's nodejs package)"
    exit 1
  fi
  # zlib.crc32, used for sample hashes, arrived in Node.js 20.15.
  if ! node -e 'process.exit(typeof require("node:zlib").crc32 === "function" ? 0 : 1)'; then
    log "Node.js $(node --version) is too old: nestbox needs 20.15 or newer"
    exit 1
  fi
}

install_modules() {
  local stamp=node_modules/.nestbox-lock-sha
  local want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  [[ -f $stamp && $(cat "$stamp") == "$want" ]] && return 0
  log "installing npm modules (native modules build from source; this takes a few minutes the first time)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
}

build() {
  local stamp=dist/.build-stamp
  if [[ -f $stamp ]] && [[ -z $(find src test bench web scripts/build-web.mjs tsconfig.json package.json -newer "$stamp" -print -quit 2>/dev/null) ]]; then
    return 0
  fi
  log "building"
  rm -rf dist
  npx tsc -p tsconfig.json
  # The web interface (web/ -> dist/web), bundled with esbuild.
  node scripts/build-web.mjs
  touch "$stamp"
}

# The eBPF monitor, built against this kernel (a second or two once; cached in /var/lib/nestbox/monitor).
# A host without BTF cannot build it: the service then traces with strace.
prepare_monitor() {
  [[ -e /sys/kernel/btf/vmlinux ]] || { log "no kernel BTF: the eBPF monitor is not built (strace will trace)"; return 0; }
  log "building the eBPF monitor"
  as_root node dist/src/machinery/host/tracer/monitor-build.js >/dev/null
}

# The linux machines' guest root (debootstrap, about 2 minutes and 1 GB once; cached in /var/lib/nestbox),
# with the Wine layer the Windows samples' tests run on (the service builds it at the first PE otherwise).
prepare_guest() {
  log "preparing the linux guest root and its Wine layer"
  as_root node dist/src/machinery/linux/prepare-guest.js --wine >/dev/null
}

# The qemu machines' guest image (debootstrap and a first boot, a few minutes once; cached in /var/lib/nestbox).
prepare_qemu_image() {
  log "preparing the qemu guest image"
  as_root node dist/src/cli/main.js image build >/dev/null
}

# The detection corpus's compiled samples (test/corpus; static ELFs and PEs, seconds once).
build_corpus() {
  log "building the detection corpus"
  scripts/build-corpus.sh
}

# The Windows test samples (test/fixtures/windows; 32- and 64-bit PEs built with mingw-w64, seconds once).
build_windows_samples() {
  log "building the Windows test samples"
  scripts/build-windows-samples.sh
}

install_packages "${packages[@]}"
check_node
install_modules
build
prepare_monitor
if $want_tests; then build_corpus; build_windows_samples; prepare_guest; prepare_qemu_image; fi
