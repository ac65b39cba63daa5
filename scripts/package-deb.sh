#!/usr/bin/env bash
# scripts/package-deb.sh: builds the Debian package of Ferrocl with dpkg-deb (no cargo-deb:
# nothing to install beyond dpkg, which every Debian machine has).
#
#   bash scripts/package-deb.sh [OUTDIR]      default OUTDIR: target/debian
#
# The package, ferrocl-opencl-icd_<version>_<arch>.deb, holds:
#   /usr/lib/<multiarch>/libferrocl.so   the driver (release build, debug info stripped)
#   /usr/bin/ferrocl-clc                 the offline compiler (Khronos CTS --compilation-program)
#   /etc/OpenCL/vendors/ferrocl.icd      its registration with the ocl-icd loader (a conffile)
#   /usr/share/doc/ferrocl-opencl-icd/   README, docs/ and copyright
# It depends on ocl-icd-libopencl1 and the OpenCL C toolchain the driver runs (clang-15,
# llvm-15, llvm-spirv-15), provides opencl-icd like the other ICD packages, and removes
# cleanly (dpkg -r). The build is portable (x86-64-v2 baseline, .cargo/config.toml).
# Install it with `sudo apt-get install ./target/debian/ferrocl-opencl-icd_*.deb`.
set -euo pipefail
# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$FERROCL_ROOT"

OUTDIR="${1:-$FERROCL_ROOT/target/debian}"
PACKAGE=ferrocl-opencl-icd
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
ARCH="$(dpkg --print-architecture)"
MULTIARCH="$(deb_multiarch)"
[[ -n "$VERSION" && -n "$ARCH" && -n "$MULTIARCH" ]] || die "cannot tell version/architecture"

say "cargo build --release -p ferrocl-icd -p ferrocl-clc"
cargo build --release -p ferrocl-icd -p ferrocl-clc

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/ferrocl-deb.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
ROOT="$STAGE/$PACKAGE"
LIBDIR="/usr/lib/$MULTIARCH"
DOCDIR="/usr/share/doc/$PACKAGE"
install -d "$ROOT/DEBIAN" "$ROOT$LIBDIR" "$ROOT/usr/bin" "$ROOT/etc/OpenCL/vendors" "$ROOT$DOCDIR"
install -m 644 target/release/libferrocl.so "$ROOT$LIBDIR/libferrocl.so"
install -m 755 target/release/ferrocl-clc "$ROOT/usr/bin/ferrocl-clc"
strip --strip-debug "$ROOT$LIBDIR/libferrocl.so" "$ROOT/usr/bin/ferrocl-clc"
sed "s|@LIBDIR@|$LIBDIR|g" vendors.icd >"$ROOT/etc/OpenCL/vendors/ferrocl.icd"
chmod 644 "$ROOT/etc/OpenCL/vendors/ferrocl.icd"
install -m 644 README.md "$ROOT$DOCDIR/README.md"
install -d "$ROOT$DOCDIR/docs"
install -m 644 docs/*.md "$ROOT$DOCDIR/docs/"
gzip -9n "$ROOT$DOCDIR/README.md" "$ROOT$DOCDIR"/docs/*.md
cat >"$ROOT$DOCDIR/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ferrocl
Files: *
License: MIT or Apache-2.0
EOF

# Shared-library dependencies of the two binaries (libc, libgcc) as dpkg-shlibdeps would
# find them; the toolchain is needed at run time for OpenCL C (clCreateProgramWithSource).
shlib_depends="libc6, libgcc-s1"
if command -v dpkg-shlibdeps >/dev/null; then
    mkdir -p "$STAGE/debian" && touch "$STAGE/debian/control"
    if found="$(cd "$STAGE" && dpkg-shlibdeps -O "$ROOT$LIBDIR/libferrocl.so" \
        "$ROOT/usr/bin/ferrocl-clc" 2>/dev/null)"; then
        shlib_depends="$(sed -n 's/^shlibs:Depends=//p' <<<"$found")"
    fi
    rm -rf "$STAGE/debian"
fi
installed_size="$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)"
cat >"$ROOT/DEBIAN/control" <<EOF
Package: $PACKAGE
Version: $VERSION
Architecture: $ARCH
Section: libs
Priority: optional
Maintainer: Ferrocl developers <ferrocl@localhost>
Installed-Size: $installed_size
Depends: $shlib_depends, ocl-icd-libopencl1, clang-15, llvm-15, llvm-spirv-15
Recommends: clinfo
Provides: opencl-icd
Description: Ferrocl: OpenCL 3.1 for CPUs (ICD)
 An OpenCL 3.1 platform for x86-64 CPUs, written in Rust: SPIR-V and OpenCL C
 programs are validated, compiled with Cranelift and run on all cores, with
 correctly rounded math. Registered with the ocl-icd loader, so every OpenCL
 application can choose it. Includes ferrocl-clc, an offline OpenCL C compiler
 for the Khronos conformance tests.
EOF
echo /etc/OpenCL/vendors/ferrocl.icd >"$ROOT/DEBIAN/conffiles"
# ldconfig runs through dpkg's trigger after install and removal.
echo "activate-noawait ldconfig" >"$ROOT/DEBIAN/triggers"

mkdir -p "$OUTDIR"
DEB="$OUTDIR/${PACKAGE}_${VERSION}_${ARCH}.deb"
say "dpkg-deb --build → $DEB"
dpkg-deb --root-owner-group --build "$ROOT" "$DEB" >/dev/null
dpkg-deb --info "$DEB" | sed -n '/Package:/,$p'
dpkg-deb --contents "$DEB"
echo "$DEB"
