#!/usr/bin/env bash
# scripts/setup.sh: sets up Ferrocl on Debian 12 — installs the system packages, builds
# libferrocl.so (release), registers it with the ocl-icd loader, shows `clinfo -l`, then
# builds and runs the sample (examples/vecadd.c on SPIR-V from examples/vecadd.cl).
#
#   sudo bash scripts/setup.sh      as root: apt-get + /etc/OpenCL/vendors/ferrocl.icd
#   bash scripts/setup.sh           as a user: no apt-get (fails if packages are missing),
#                                   writes target/release/ferrocl.icd instead and prints
#                                   the OCL_ICD_VENDORS line to use it.
# Environment: FERROCL_WITH_POCL=0 skips installing pocl-opencl-icd (installed by default
# as the reference implementation for the test suite). Safe to run again.
set -euo pipefail
# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$FERROCL_ROOT"

say "system packages"
ensure_packages always

# Under sudo, build as the user who ran sudo when they have a Rust toolchain (sudo resets
# PATH, and a root-owned target/ would break their later builds).
AS_USER=()
if [[ "$(id -u)" == 0 && -n "${SUDO_USER:-}" && "$SUDO_USER" != root ]]; then
    user_home="$(getent passwd "$SUDO_USER" | cut -d: -f6)"
    user_env=(env "HOME=$user_home" "PATH=$user_home/.cargo/bin:$PATH")
    if runuser -u "$SUDO_USER" -- "${user_env[@]}" cargo --version >/dev/null 2>&1; then
        AS_USER=(runuser -u "$SUDO_USER" -- "${user_env[@]}")
        echo "building as $SUDO_USER (who ran sudo), so target/ stays theirs"
    else
        echo "note: $SUDO_USER has no cargo on PATH; building as root"
    fi
fi
"${AS_USER[@]}" cargo --version >/dev/null 2>&1 ||
    die "cargo not found: install the Rust toolchain (rustup) first"

say "cargo build --release -p ferrocl-icd -p ferrocl-clc"
"${AS_USER[@]}" cargo build --release -p ferrocl-icd -p ferrocl-clc
LIBDIR="$FERROCL_ROOT/target/release"

say "registering the ICD"
if [[ "$(id -u)" == 0 ]]; then
    mkdir -p /etc/OpenCL/vendors
    ICD=/etc/OpenCL/vendors/ferrocl.icd
    write_icd "$LIBDIR" "$ICD"
    echo "$ICD -> $(cat "$ICD")"
    unset OCL_ICD_VENDORS # use the system registration from here on
else
    ICD="$LIBDIR/ferrocl.icd"
    write_icd "$LIBDIR" "$ICD"
    export OCL_ICD_VENDORS="$ICD"
    cat <<MSG
Not root: /etc/OpenCL/vendors is left alone. The ICD file is $ICD.
Make OpenCL programs see Ferrocl with (replaces the system's list of ICDs):
    export OCL_ICD_VENDORS=$ICD
or point it at a directory of .icd files to see several platforms.
MSG
fi

say "clinfo -l"
clinfo -l || echo "(clinfo failed with status $?)"

say "building the sample (target/examples/)"
# shellcheck disable=SC2016 # $1 is expanded by the inner shell
"${AS_USER[@]}" bash -c 'source "$1/scripts/common.sh" && build_example "$1/target/examples"' \
    _ "$FERROCL_ROOT"

say "running: target/examples/vecadd target/examples/vecadd.spv"
if target/examples/vecadd target/examples/vecadd.spv; then
    say "setup complete: Ferrocl is registered and the sample passed"
else
    status=$?
    say "setup complete, but the sample FAILED (status $status): see the messages above"
    exit "$status"
fi
