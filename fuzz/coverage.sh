#!/usr/bin/env bash
# Source coverage of the C reached by the fuzz corpora: builds each harness
# with clang's source-based coverage (fuzz/replay.c in place of libFuzzer),
# replays fuzz/corpus/<name> and build/fuzz/corpus/<name> (what fuzzing
# found), and prints llvm-cov's per-file report for src/ and the module's
# ABI (wasm/abi.c, wasm/abi_bridge.c) over all harnesses.
#   bash fuzz/coverage.sh [--html DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
html=
while [ $# -gt 0 ]; do
  case "$1" in
    --html) html=$2; shift 2;;
    *) echo "unknown option $1" >&2; exit 2;;
  esac
done
out=build/coverage
rm -rf "$out"
mkdir -p "$out"
lib=()
lib+=(src/*.c wasm/*.c)  # (the codec, and its wasm ABI built natively)
objs=()
for h in fuzz/fuzz_*.c; do
  name=$(basename "$h" .c); name=${name#fuzz_}
  exe=$out/$name
  clang -std=c11 -O1 -g -fprofile-instr-generate -fcoverage-mapping -Isrc -o "$exe" "$h" fuzz/replay.c "${lib[@]}"
  dirs=(fuzz/corpus/$name)
  [ "$name" != bridge ] || dirs+=(fuzz/corpus/response)
  [ -d build/fuzz/corpus/$name ] && dirs+=(build/fuzz/corpus/$name)
  printf '%s: ' "$name"
  LLVM_PROFILE_FILE="$out/$name.profraw" "$exe" "${dirs[@]}"
  objs+=(-object "$exe")
done
llvm-profdata merge -sparse "$out"/*.profraw -o "$out/all.profdata"
llvm-cov report "${objs[@]:1}" -instr-profile="$out/all.profdata" "${lib[@]}"
if [ -n "$html" ]; then
  llvm-cov show "${objs[@]:1}" -instr-profile="$out/all.profdata" -format=html -output-dir="$html" "${lib[@]}"
  echo "HTML report in $html"
fi
