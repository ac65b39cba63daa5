# shellcheck shell=bash
# scripts/common.sh: shared by setup.sh, test.sh and .ci/run (sourced, not run): the list of
# system packages, installing the missing ones, and building SPIR-V from OpenCL C (with
# ferrocl-clc).

FERROCL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian 12 packages the build, the tests and the sample need.
FERROCL_PACKAGES=(
    ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo
    clang-15 llvm-15 llvm-spirv-15 spirv-tools gcc dpkg-dev
    # clang and llvm-spirv as libraries, for OpenCL C builds without a process per tool
    # (opencl-c/build.rs): their headers and a C++ compiler.
    g++ libclang-15-dev libclang-cpp15-dev llvm-15-dev libllvmspirvlib-15-dev
)
# PoCL is installed by default (FERROCL_WITH_POCL=0 to skip): it is the reference the test
# suite is validated against (FERROCL_TEST_PLATFORM_ICD, FERROCL_TEST_WITH_POCL).
if [[ "${FERROCL_WITH_POCL:-1}" != 0 ]]; then
    FERROCL_PACKAGES+=(pocl-opencl-icd)
fi

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Prints the packages of FERROCL_PACKAGES that are not installed.
missing_packages() {
    local p
    for p in "${FERROCL_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
            printf '%s\n' "$p"
        fi
    done
}

# Installs the missing packages as root (apt-get update first); as another user, fails
# with the list. With "always", runs apt-get update + install even when nothing is missing.
ensure_packages() {
    local mode="${1:-if-missing}" missing
    missing="$(missing_packages | tr '\n' ' ')"
    if [[ -z "$missing" && "$mode" != always ]]; then
        echo "system packages: all present"
        return 0
    fi
    if [[ "$(id -u)" != 0 ]]; then
        [[ -z "$missing" ]] && { echo "system packages: all present (not root: no apt-get)"; return 0; }
        die "missing packages: $missing- install them as root (sudo bash scripts/setup.sh)"
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${FERROCL_PACKAGES[@]}" </dev/null
    missing="$(missing_packages | tr '\n' ' ')"
    [[ -z "$missing" ]] || die "still missing after apt-get install: $missing"
}

# Checks the Rust toolchain pieces the scripts use.
ensure_rust() {
    command -v cargo >/dev/null || die "cargo not found: install the Rust toolchain (rustup) first"
    cargo fmt --version >/dev/null 2>&1 || die "rustfmt missing: rustup component add rustfmt"
    cargo clippy --version >/dev/null 2>&1 || die "clippy missing: rustup component add clippy"
}

# spirv_from_cl CLC IN.cl OUT.spv: OpenCL C → SPIR-V with CLC, a ferrocl-clc binary (the
# driver's own recipe and device feature set, as clBuildProgram compiles), validated with
# spirv-val. (Each command checks its status: callers may run this where `set -e` is suspended.)
spirv_from_cl() {
    local clc="$1" in="$2" out="$3"
    mkdir -p "$(dirname "$out")" || return 1
    "$clc" --source "$in" --output "$out" -- -cl-std=CL1.2 || return 1
    spirv-val --target-env opencl2.1 "$out" || return 1
}

# deb_multiarch: the Debian multiarch triplet of this machine (x86_64-linux-gnu).
deb_multiarch() {
    dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch
}

# write_icd LIBDIR OUT.icd: fills the vendors.icd template with an absolute library dir.
write_icd() {
    local libdir="$1" out="$2" tmp
    [[ -f "$libdir/libferrocl.so" ]] || { echo "error: $libdir/libferrocl.so not found" >&2; return 1; }
    tmp="$(mktemp "$(dirname "$out")/.ferrocl.icd.XXXXXX")" || return 1
    sed "s|@LIBDIR@|$libdir|g" "$FERROCL_ROOT/vendors.icd" >"$tmp" || return 1
    chmod 644 "$tmp" && mv -f "$tmp" "$out"
}

# build_example OUTDIR [PROFILE]: OUTDIR/vecadd (C, -lOpenCL) and OUTDIR/vecadd.spv from
# examples/, the SPIR-V by target/PROFILE/ferrocl-clc (release by default; built already).
build_example() {
    local outdir="$1" clc="$FERROCL_ROOT/target/${2:-release}/ferrocl-clc"
    mkdir -p "$outdir" || return 1
    spirv_from_cl "$clc" "$FERROCL_ROOT/examples/vecadd.cl" "$outdir/vecadd.spv" || return 1
    gcc -std=c11 -O2 -Wall -Wextra -Werror "$FERROCL_ROOT/examples/vecadd.c" \
        -o "$outdir/vecadd" -lOpenCL
}
