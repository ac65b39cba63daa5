#!/bin/sh
# Builds the fuzz seed corpus in fuzz/corpus/parse_compile from the OpenCL C kernels of the
# codegen and frontend tests, compiled by ferrocl-clc (the driver's own recipe, as
# clBuildProgram runs it: optimised and with -cl-opt-disable, each also with clang's debug
# information, OpenCL.DebugInfo.100), plus the frontend's .spvasm corpus. FERROCL_CLC names
# the ferrocl-clc to run; by default the workspace's release build (built here if missing).
# Seeds are regenerated, never committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/corpus/parse_compile"
mkdir -p "$out"
clc=${FERROCL_CLC:-$here/../target/release/ferrocl-clc}
if [ ! -x "$clc" ]; then
    (cd "$here/.." && cargo build --release -p ferrocl-clc)
fi
for src in "$here"/../codegen/tests/kernels/*.cl "$here"/../frontend/tests/kernels/*.cl; do
    [ -f "$src" ] || continue
    stem=$(basename "$src" .cl)
    for r in opt O0; do
        opt=
        [ $r = O0 ] && opt=-cl-opt-disable
        for g in "" --debug-info; do
            spv="$out/$stem-$r${g:+-g}.spv"
            # OpenCL C 1.2 where it compiles, else 3.0. (llvm-spirv-15 refuses debug information
            # in some optimised modules: those are skipped.)
            "$clc" $g --source "$src" --output "$spv" -- -cl-std=CL1.2 $opt 2>/dev/null \
                || "$clc" $g --source "$src" --output "$spv" -- -cl-std=CL3.0 $opt 2>/dev/null \
                || { echo "skipped $stem-$r${g:+-g} (ferrocl-clc failed)"; rm -f "$spv"; }
        done
    done
done
# The invalid-module corpus of the frontend tests: small modules near the validation rules.
for asm in "$here"/../frontend/tests/invalid/*.spvasm "$here"/../icd/tests/data/*.spvasm; do
    env=$(sed -n 's/^; target-env: //p' "$asm")
    spirv-as --target-env "${env:-spv1.3}" "$asm" -o "$out/$(basename "$asm" .spvasm).spv" \
        || echo "skipped $(basename "$asm") (spirv-as failed)"
done
echo "seeds in $out: $(ls "$out" | wc -l)"
