/* Half-precision references from the host's GCC runtime: libgcc's soft-float conversions
 * (__truncdfhf2, __truncsfhf2, __extendhfdf2), which round in the mode of the SSE control
 * register that fesetround sets. They are looked up in libgcc_s.so.1 by name and version:
 * a Rust program also links compiler-builtins, whose functions of the same names always round
 * to nearest and would otherwise be the ones called. Nothing here shares code with Ferrocl. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fenv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


typedef _Float16 (*trunc_df_fn)(double);
typedef _Float16 (*trunc_sf_fn)(float);
typedef double (*extend_hf_df_fn)(_Float16);
typedef float (*extend_hf_sf_fn)(_Float16);

static const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

static void *libgcc_function(const char *name) {
    static void *libgcc;
    if (!libgcc)
        libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    void *f = libgcc ? dlvsym(libgcc, name, "GCC_12.0.0") : NULL;
    if (!f)
        abort(); /* no reference to test against: the test cannot run */
    return f;
}

static uint16_t bits_of(_Float16 h) {
    uint16_t b;
    memcpy(&b, &h, sizeof b);
    return b;
}

/* 1 when libgcc_s.so.1 has the conversions (GCC 12 or later). */
int ferrocl_ref_available(void) {
    void *libgcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    return libgcc && dlvsym(libgcc, "__truncdfhf2", "GCC_12.0.0") &&
           dlvsym(libgcc, "__truncsfhf2", "GCC_12.0.0") &&
           dlvsym(libgcc, "__extendhfdf2", "GCC_12.0.0") &&
           dlvsym(libgcc, "__extendhfsf2", "GCC_12.0.0");
}

uint16_t ferrocl_ref_f64_to_f16(double x, int mode) {
    trunc_df_fn trunc = (trunc_df_fn)libgcc_function("__truncdfhf2");
    int old = fegetround();
    fesetround(modes[mode & 3]);
    _Float16 h = trunc(x);
    fesetround(old);
    return bits_of(h);
}

uint16_t ferrocl_ref_f32_to_f16(float x, int mode) {
    trunc_sf_fn trunc = (trunc_sf_fn)libgcc_function("__truncsfhf2");
    int old = fegetround();
    fesetround(modes[mode & 3]);
    _Float16 h = trunc(x);
    fesetround(old);
    return bits_of(h);
}

double ferrocl_ref_f16_to_f64(uint16_t bits) {
    extend_hf_df_fn extend = (extend_hf_df_fn)libgcc_function("__extendhfdf2");
    _Float16 h;
    memcpy(&h, &bits, sizeof h);
    return extend(h);
}

float ferrocl_ref_f16_to_f32(uint16_t bits) {
    extend_hf_sf_fn extend = (extend_hf_sf_fn)libgcc_function("__extendhfsf2");
    _Float16 h;
    memcpy(&h, &bits, sizeof h);
    return extend(h);
}
