#!/usr/bin/env bash
# Builds the detection corpus's compiled samples (test/corpus/<malicious|benign>/<id>/) from their sources:
#   sample.c      -> sample      a static x86-64 ELF (gcc -static)
#   sample.i386.c -> sample      a static i386 ELF with no libc (gcc -m32 -nostdlib -static)
#   sample.win.c  -> sample.exe  a PE32+ (x86_64-w64-mingw32-gcc)
# Scripts (sample.sh/.py/.pl/.js) are submitted as they are. A sample is rebuilt only when its source is
# newer than its build. The flags pin what would otherwise differ between builds (paths, timestamps, ids),
# so the same source and toolchain give the same bytes.
#   scripts/build-corpus.sh [corpus folder]
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-test/corpus}

log() { printf '[corpus] %s\n' "$*" >&2; }

export SOURCE_DATE_EPOCH=0
common=(-O1 -w -ffile-prefix-map="$PWD"=. -fno-ident)

# Up to date when the build exists and is newer than the source.
stale() { [[ ! -e $2 || $1 -nt $2 ]]; }

# build_elf <source> <output> [gcc flags]: a static ELF.
build_elf() {
  local src=$1 out=$2
  shift 2
  stale "$src" "$out" || return 0
  log "gcc${*:+ $*} -static $src"
  gcc "${common[@]}" "$@" -static -frandom-seed="$src" -Wl,--build-id=none -o "$out.tmp" "$src"
  mv "$out.tmp" "$out"
}

build_pe() {
  local src=$1 out=${1%.win.c}.exe
  stale "$src" "$out" || return 0
  log "x86_64-w64-mingw32-gcc $src"
  x86_64-w64-mingw32-gcc "${common[@]}" -frandom-seed="$src" -Wl,--no-insert-timestamp -o "$out.tmp" "$src"
  mv "$out.tmp" "$out"
}

shopt -s nullglob
built=0
for dir in "$corpus"/malicious/*/ "$corpus"/benign/*/; do
  [[ -f $dir/label.json ]] || { log "$dir has no label.json"; exit 1; }
  if [[ -f ${dir}sample.win.c ]]; then build_pe "${dir}sample.win.c"; built=$((built + 1)); fi
  if [[ -f ${dir}sample.c ]]; then build_elf "${dir}sample.c" "${dir}sample"; built=$((built + 1)); fi
  if [[ -f ${dir}sample.i386.c ]]; then build_elf "${dir}sample.i386.c" "${dir}sample" -m32 -nostdlib -fno-pie -no-pie; built=$((built + 1)); fi
done
log "$built compiled samples up to date"
