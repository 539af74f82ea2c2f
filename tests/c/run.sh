#!/usr/bin/env bash
# Builds each tests/c/test_*.c natively with the codec under AddressSanitizer
# and UndefinedBehaviorSanitizer (LeakSanitizer included) and runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-clang}
out=build/native
mkdir -p "$out"
lib=()
lib+=(src/*.c)  # (the codec; its wasm ABI is in wasm/)
status=0
for t in tests/c/test_*.c; do
  exe="$out/$(basename "$t" .c)"
  $CC -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -o "$exe" "$t" "${lib[@]}"
  echo "== $exe"
  ( cd tests/c && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "../../$exe" ) || status=1
done
exit $status
