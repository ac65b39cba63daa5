#!/usr/bin/env bash
# scripts/test.sh: the whole test suite — rustfmt check, clippy (-D warnings), cargo test
# of the workspace (icd/tests drive the fresh debug libferrocl.so through the system
# loader), the C example built with gcc -lOpenCL run through the loader against the
# debug library (also under bench/kernel_times' layer), and the Debian package (scripts/test-deb.sh: built; as root also installed,
# listed by clinfo, the sample run on it, purged). Every step runs; the script exits non-zero
# if any failed.
#
# Installs missing system packages when run as root (as scripts/setup.sh would).
# Environment:
#   FERROCL_TEST_PLATFORM_ICD=/etc/OpenCL/vendors/pocl.icd  run icd/tests and the example
#       against that ICD instead (validates the tests themselves; builds from OpenCL C).
#   FERROCL_TEST_WITH_POCL=1  additionally run icd/tests against PoCL after the Ferrocl run.
set -euo pipefail
# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$FERROCL_ROOT"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# The program cache of OpenCL C builds: cargo's processes get target/ferrocl-cache from
# .cargo/config.toml; the example and the package test run outside cargo, so say it here too,
# and the suite never writes into the user's ~/.cache.
export FERROCL_CACHE_DIR="${FERROCL_CACHE_DIR:-$FERROCL_ROOT/target/ferrocl-cache}"

ensure_packages
ensure_rust

failed=()
step() {
    local name="$1"
    shift
    say "$name"
    local start=$SECONDS
    if "$@"; then
        echo "--- $name: ok ($((SECONDS - start)) s)"
    else
        echo "--- $name: FAILED (status $?, $((SECONDS - start)) s)"
        failed+=("$name")
    fi
}

run_example() {
    local outdir="$FERROCL_ROOT/target/examples-debug"
    cargo build -p ferrocl-icd -p ferrocl-clc || return 1
    build_example "$outdir" debug || return 1
    if [[ -n "${FERROCL_TEST_PLATFORM_ICD:-}" ]]; then
        OCL_ICD_VENDORS="$FERROCL_TEST_PLATFORM_ICD" FERROCL_EXAMPLE_ANY=1 \
            "$outdir/vecadd" "$FERROCL_ROOT/examples/vecadd.cl"
    else
        write_icd "$FERROCL_ROOT/target/debug" "$outdir/ferrocl-debug.icd" || return 1
        OCL_ICD_VENDORS="$outdir/ferrocl-debug.icd" "$outdir/vecadd" "$outdir/vecadd.spv"
    fi
}

# bench/kernel_times: the layer built with gcc, loaded by the system loader around the C
# example, must count the example's one launch of vecadd.
run_kernel_times_layer() {
    local outdir="$FERROCL_ROOT/target/examples-debug" table
    gcc -O2 -Wall -Wextra -Werror -shared -fPIC \
        -o "$outdir/libkernel_times.so" "$FERROCL_ROOT/bench/kernel_times/kernel_times_layer.c" \
        -lpthread || return 1
    table="$outdir/kernel_times.txt"
    rm -f "$table"
    OPENCL_LAYERS="$outdir/libkernel_times.so" KERNEL_TIMES_OUT="$table" \
        OCL_ICD_VENDORS="$outdir/ferrocl-debug.icd" "$outdir/vecadd" "$outdir/vecadd.spv" || return 1
    cat "$table"
    # global 1048576 (the example's size), no local size, one launch, vecadd.
    grep -Eq '^ +1048576 +0 +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +100\.0%  vecadd$' "$table"
}

step "cargo fmt --check" cargo fmt --all -- --check
step "cargo clippy" cargo clippy --workspace --all-targets -- -D warnings
step "cargo test" cargo test --workspace --no-fail-fast
step "C example through the loader" run_example
if [[ -z "${FERROCL_TEST_PLATFORM_ICD:-}" ]]; then
    step "kernel-times layer through the loader" run_kernel_times_layer
fi
step "Debian package: build, install, clinfo, sample, purge" bash scripts/test-deb.sh
if [[ "${FERROCL_TEST_WITH_POCL:-0}" != 0 ]]; then
    step "icd tests against PoCL" env FERROCL_TEST_PLATFORM_ICD=/etc/OpenCL/vendors/pocl.icd \
        cargo test --no-fail-fast -p ferrocl-icd --test compute --test ndrange --test errors
fi

if ((${#failed[@]})); then
    say "FAILED steps: ${failed[*]}"
    exit 1
fi
say "all steps passed"
