#!/usr/bin/env bash
# Builds each tests/c/test_*.c natively with the codec under AddressSanitizer
# and UndefinedBehaviorSanitizer (LeakSanitizer included) and runs it, after
# checking the names of the extern symbols.
set -euo pipefail
cd "$(dirname "$0")/../.."
CC=${CC:-clang}
out=build/native
mkdir -p "$out"
lib=()
lib+=(src/*.c wasm/request_record.c)  # (the codec, and the request record the tests replay)
status=0
# Every extern symbol of the codec and the module's edges starts with nh_
# (a host or a program linking the C sees no other names).
rm -rf "$out/obj" && mkdir -p "$out/obj"
for f in src/*.c wasm/*.c; do
  $CC -std=c11 -O1 -Isrc -c -o "$out/obj/$(basename "$f" .c).o" "$f"
done
bare=$(nm -g --defined-only "$out"/obj/*.o | awk 'NF == 3 && $3 !~ /^nh_/ { print $3 }')
if [ -n "$bare" ]; then
  echo "extern symbols without the nh_ prefix:" $bare
  status=1
fi
for t in tests/c/test_*.c; do
  exe="$out/$(basename "$t" .c)"
  $CC -std=c11 -O1 -g -Wall -Wextra -Werror -Isrc -fsanitize=address,undefined -fno-sanitize-recover=all \
    -fno-omit-frame-pointer -o "$exe" "$t" "${lib[@]}"
  echo "== $exe"
  ( cd tests/c && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "../../$exe" ) || status=1
done
exit $status
