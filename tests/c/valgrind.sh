#!/usr/bin/env bash
# Builds the native C tests and the fuzz harnesses (with fuzz/replay.c in
# place of libFuzzer) without sanitizers and runs them under valgrind's
# memcheck: any invalid access, use of uninitialised memory or leak (definite,
# indirect or possible) fails.  The harnesses replay fuzz/corpus/<name>, or
# the corpora under --corpus DIR (DIR/<name>/; build/fuzz/corpus after a
# fuzzing run).
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-clang}
corpus=fuzz/corpus
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
out=build/valgrind
mkdir -p "$out"
lib=()
lib+=(src/*.c wasm/*.c)  # (the codec, and its wasm ABI built natively)
vg=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes)
cflags=(-std=c11 -O1 -g -gdwarf-4 -Wall -Wextra -Werror -Isrc)
status=0
for t in tests/c/test_*.c; do
  exe="$out/$(basename "$t" .c)"
  $CC "${cflags[@]}" -o "$exe" "$t" "${lib[@]}"
  echo "== valgrind $exe"
  ( cd tests/c && "${vg[@]}" "../../$exe" ) || status=1
done
for h in fuzz/fuzz_*.c; do
  name=$(basename "$h" .c); name=${name#fuzz_}
  exe="$out/replay_$name"
  $CC "${cflags[@]}" -o "$exe" "$h" fuzz/replay.c "${lib[@]}"
  dirs=("$corpus/$name")
  # (the bridge's harness reads responses as the response harness does)
  [ "$name" != bridge ] || dirs=("$corpus/response")
  echo "== valgrind $exe ${dirs[*]}"
  "${vg[@]}" "$exe" "${dirs[@]}" || status=1
done
exit $status
