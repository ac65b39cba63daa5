#!/bin/sh
# Builds the fuzz seed corpus in fuzz/corpus/parse_compile from the OpenCL C kernels of the
# codegen tests (clang-15 + llvm-spirv-15, at -O0 and with the optimising recipe, SPIR-V 1.0 and
# 1.4, with and without -g; debug info only at 1.4), plus the frontend's .spvasm corpus.. Seeds are regenerated, never committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/corpus/parse_compile"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
passes='sroa,early-cse,instcombine,simplifycfg,loop-mssa(licm),gvn,loop(indvars,loop-unroll-full),instcombine,simplifycfg,gvn,instcombine'
for src in "$here"/../codegen/tests/kernels/*.cl "$here"/../frontend/tests/kernels/*.cl; do
    [ -f "$src" ] || continue
    stem=$(basename "$src" .cl)
    # OpenCL C 1.2 where it compiles, else 3.0 with every optional feature clang knows.
    lang="-cl-std=CL1.2"
    clang-15 $lang -target spir64 -fsyntax-only -Xclang -finclude-default-header "$src" 2>/dev/null \
        || lang="-cl-std=CL3.0 -Xclang -cl-ext=+all"
    for g in "" "-g"; do
        clang-15 $lang -target spir64 -O0 $g -emit-llvm -c -Xclang -finclude-default-header \
            "$src" -o "$tmp/$stem-O0.bc" 2>/dev/null || { echo "skipped $stem (clang-15 failed)"; continue; }
        clang-15 $lang -target spir64 -O0 $g -Xclang -disable-O0-optnone -emit-llvm -c \
            -Xclang -finclude-default-header "$src" -o "$tmp/$stem-raw.bc"
        opt-15 -passes="$passes" "$tmp/$stem-raw.bc" -o "$tmp/$stem-opt.bc"
        for v in 1.0 1.4; do
            # llvm-spirv-15 asserts on debug info below SPIR-V 1.4 for some kernels.
            [ "$g" = -g ] && [ $v = 1.0 ] && continue
            for r in O0 opt; do
                # llvm-spirv-15 asserts on some optimised modules with debug info: skip those.
                llvm-spirv-15 --spirv-max-version=$v "$tmp/$stem-$r.bc" \
                    -o "$out/$stem-$r-$v${g:+-g}.spv" 2>/dev/null \
                    || { echo "skipped $stem-$r-$v$g (llvm-spirv-15 failed)"; rm -f "$out/$stem-$r-$v${g:+-g}.spv"; }
            done
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
