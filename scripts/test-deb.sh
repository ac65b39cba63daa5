#!/usr/bin/env bash
# scripts/test-deb.sh: builds the Debian package (scripts/package-deb.sh) and, as root, proves
# it as a user would meet it: installs it with apt-get, checks that `clinfo -l` lists Ferrocl
# with no OCL_ICD_VENDORS set, compiles examples/vecadd.cl with the installed ferrocl-clc and
# runs the sample on the installed driver, then purges the package and checks that nothing
# of it is left and the platform is gone. A registration written by scripts/setup.sh
# (/etc/OpenCL/vendors/ferrocl.icd, owned by no package) is set aside and put back. Without
# root, or when the package is already installed, only the build and its contents are checked.
set -euo pipefail
# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$FERROCL_ROOT"

PACKAGE=ferrocl-opencl-icd
OUTDIR="$FERROCL_ROOT/target/debian"
rm -f "$OUTDIR"/"$PACKAGE"_*.deb
bash scripts/package-deb.sh "$OUTDIR" >/dev/null
DEB="$(ls "$OUTDIR"/"$PACKAGE"_*.deb)"
contents="$(dpkg-deb --contents "$DEB")"
MULTIARCH="$(deb_multiarch)"
for f in "./usr/lib/$MULTIARCH/libferrocl.so" ./usr/bin/ferrocl-clc ./etc/OpenCL/vendors/ferrocl.icd; do
    grep -q " $f\$" <<<"$contents" || die "$DEB lacks $f"
done
echo "built $DEB: contents ok"

if [[ "$(id -u)" != 0 ]]; then
    echo "not root: installing the package is not tested"
    exit 0
fi
if dpkg-query -W -f='${Status}' "$PACKAGE" 2>/dev/null | grep -q 'install ok installed'; then
    echo "$PACKAGE is installed already: installing it again is not tested (it stays as it is)"
    exit 0
fi

ICD=/etc/OpenCL/vendors/ferrocl.icd
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ferrocl-deb-test.XXXXXX")"
restore() {
    dpkg --purge "$PACKAGE" >/dev/null 2>&1 || true
    if [[ -f "$WORK/ferrocl.icd.saved" ]]; then
        mv -f "$WORK/ferrocl.icd.saved" "$ICD"
    fi
    rm -rf "$WORK"
}
trap restore EXIT
if [[ -e "$ICD" ]]; then
    mv "$ICD" "$WORK/ferrocl.icd.saved"
fi

say "apt-get install $DEB"
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$DEB" </dev/null >"$WORK/apt.log" 2>&1 ||
    { cat "$WORK/apt.log"; die "apt-get install failed"; }
grep -q "$MULTIARCH/libferrocl.so" "$ICD" || die "$ICD does not name the installed library"

say "clinfo -l (no OCL_ICD_VENDORS)"
listing="$(env -u OCL_ICD_VENDORS clinfo -l)"
echo "$listing"
grep -q "Ferrocl" <<<"$listing" || die "clinfo -l does not list Ferrocl"

say "the sample on the installed driver, its SPIR-V from the installed ferrocl-clc"
gcc -std=c11 -O2 -Wall -Wextra -Werror examples/vecadd.c -o "$WORK/vecadd" -lOpenCL
/usr/bin/ferrocl-clc --source examples/vecadd.cl --output "$WORK/vecadd.spv" -- -cl-std=CL1.2
spirv-val --target-env opencl2.1 "$WORK/vecadd.spv"
env -u OCL_ICD_VENDORS "$WORK/vecadd" "$WORK/vecadd.spv"
env -u OCL_ICD_VENDORS "$WORK/vecadd" examples/vecadd.cl

say "dpkg --purge $PACKAGE"
dpkg --purge "$PACKAGE"
for f in "/usr/lib/$MULTIARCH/libferrocl.so" /usr/bin/ferrocl-clc "$ICD" "/usr/share/doc/$PACKAGE"; do
    [[ ! -e "$f" ]] || die "$f is still there after purge"
done
if env -u OCL_ICD_VENDORS clinfo -l 2>/dev/null | grep -q Ferrocl; then
    die "Ferrocl is still listed after purge"
fi
echo "purged: no file left, no platform listed"
