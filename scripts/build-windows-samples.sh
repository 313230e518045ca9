#!/usr/bin/env bash
# Builds the Windows test samples (test/fixtures/windows/*.c) with mingw-w64, 32- and 64-bit:
#   test/fixtures/windows/<name>.c -> test/fixtures/windows/build/32/<name>.exe  (i686-w64-mingw32-gcc, PE32)
#                                  -> test/fixtures/windows/build/64/<name>.exe  (x86_64-w64-mingw32-gcc, PE32+)
# Sources named *-dll.c become <name>.dll (exports undecorated). A sample is rebuilt only when its source is
# newer than its build. As in build-corpus.sh, the flags pin paths, timestamps and ids, so the same source
# and toolchain give the same bytes.
#   scripts/build-windows-samples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
sources=test/fixtures/windows
out=$sources/build

log() { printf '[windows samples] %s\n' "$*" >&2; }

export SOURCE_DATE_EPOCH=0
common=(-O1 -Wall -ffile-prefix-map="$PWD"=. -fno-ident -Wl,--no-insert-timestamp -s)

# What each sample links beyond mingw's defaults (kernel32, user32, advapi32, shell32...).
libraries() {
  case $1 in
    dropper) echo -lurlmon ;;
    gui) echo -mwindows ;;
    *) ;;
  esac
}

build() {
  local src=$1 bits=$2 compiler=$3 name kind output
  name=$(basename "$src" .c)
  if [[ $name == *-dll ]]; then kind=dll; else kind=exe; fi
  output=$out/$bits/$name.$kind
  [[ -e $output && ! $src -nt $output ]] && return 0
  mkdir -p "$out/$bits"
  local flags=("${common[@]}" -frandom-seed="$src")
  if [[ $kind == dll ]]; then flags+=(-shared -Wl,--kill-at); else flags+=(-municode); fi
  # shellcheck disable=SC2046
  "$compiler" "${flags[@]}" -o "$output.tmp" "$src" $(libraries "$name")
  mv "$output.tmp" "$output"
  log "$bits-bit $output"
}

shopt -s nullglob
count=0
for src in "$sources"/*.c; do
  build "$src" 32 i686-w64-mingw32-gcc
  build "$src" 64 x86_64-w64-mingw32-gcc
  count=$((count + 2))
done
log "$count samples up to date"
