//! Texel conversion between colours (four float, int or uint components, as kernels see them)
//! and the bytes an image stores, for every format of [`crate::image`]: the host-side reference
//! of the OpenCL SPIR-V environment spec, chapter 7 (7.4 conversion rules, 7.7 data format),
//! used by `clEnqueueFillImage` and by tests of the kernel side. Each conversion is the spec's
//! preferred one: normalised formats round to nearest even after saturating (NaN becomes 0),
//! half rounds to nearest even, integers saturate, sRGB encodes with the exact curve and rounds
//! once.

#![allow(non_upper_case_globals)] // CL_Rx, CL_sRGBA, … are the spec's names.

use opencl_sys::*;

/// A colour as a kernel reads or writes it: `read_imagef`/`write_imagef` (also for depth
/// images, whose single value is in x), `read_imagei`/`write_imagei`, `read_imageui`/
/// `write_imageui`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Color {
    Float([f32; 4]),
    Int([i32; 4]),
    Uint([u32; 4]),
}

/// Which [`Color`] variant a channel data type reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorKind {
    Float,
    Int,
    Uint,
}

/// The colour kind of `channel_type` (normalised, half and float types are read as floats).
pub fn color_kind(channel_type: cl_channel_type) -> ColorKind {
    match channel_type {
        CL_SIGNED_INT8 | CL_SIGNED_INT16 | CL_SIGNED_INT32 => ColorKind::Int,
        CL_UNSIGNED_INT8 | CL_UNSIGNED_INT16 | CL_UNSIGNED_INT32 => ColorKind::Uint,
        _ => ColorKind::Float,
    }
}

/// The RGBA components (0 = R … 3 = A) the stored channels hold, in memory order. Rx and RGx
/// store no padding channel: they differ from R and RG only in the border colour of
/// CL_ADDRESS_CLAMP (alpha 0), so their texels are laid out as R and RG texels (as the Khronos
/// CTS lays them out); sRGBx has an ignored fourth byte ([`channel_slots`]). Intensity,
/// luminance and depth store the x component.
pub fn stored_components(order: cl_channel_order) -> Option<&'static [usize]> {
    Some(match order {
        CL_R | CL_Rx | CL_INTENSITY | CL_LUMINANCE | CL_DEPTH => &[0],
        CL_A => &[3],
        CL_RG | CL_RGx => &[0, 1],
        CL_RA => &[0, 3],
        CL_RGB | CL_RGBx | CL_sRGB | CL_sRGBx => &[0, 1, 2],
        CL_RGBA | CL_sRGBA => &[0, 1, 2, 3],
        CL_BGRA | CL_sBGRA => &[2, 1, 0, 3],
        CL_ARGB => &[3, 0, 1, 2],
        CL_ABGR => &[3, 2, 1, 0],
        _ => return None,
    })
}

/// Channels an element of `order` occupies: its stored components, plus the ignored fourth
/// channel of sRGBx (a four-channel format, API spec; 4 bytes as the CTS lays it out, where
/// Rx and RGx take the room of R and RG).
pub fn channel_slots(order: cl_channel_order) -> Option<usize> {
    let stored = stored_components(order)?.len();
    Some(if order == CL_sRGBx { 4 } else { stored })
}

/// Whether the order's R, G, B are sRGB-encoded (alpha stays linear).
pub fn is_srgb(order: cl_channel_order) -> bool {
    matches!(order, CL_sRGB | CL_sRGBx | CL_sRGBA | CL_sBGRA)
}

/// Bytes of one stored channel (for packed types, of the whole element).
pub fn channel_bytes(channel_type: cl_channel_type) -> Option<usize> {
    Some(match channel_type {
        CL_SNORM_INT8 | CL_UNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
        CL_SNORM_INT16 | CL_UNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 | CL_HALF_FLOAT => 2,
        CL_SIGNED_INT32 | CL_UNSIGNED_INT32 | CL_FLOAT => 4,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 => 2,
        CL_UNORM_INT_101010 | CL_UNORM_INT_101010_2 => 4,
        _ => return None,
    })
}

/// Whether all channels share one 16- or 32-bit word.
pub fn is_packed(channel_type: cl_channel_type) -> bool {
    matches!(
        channel_type,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 | CL_UNORM_INT_101010 | CL_UNORM_INT_101010_2
    )
}

/// (shift, bits) of each channel of a packed type, in channel order (R, G, B[, A]): the first
/// channel in the most significant bits (API spec, Image Format Descriptor).
fn packed_fields(channel_type: cl_channel_type) -> &'static [(u32, u32)] {
    match channel_type {
        CL_UNORM_SHORT_565 => &[(11, 5), (5, 6), (0, 5)],
        CL_UNORM_SHORT_555 => &[(10, 5), (5, 5), (0, 5)],
        CL_UNORM_INT_101010 => &[(20, 10), (10, 10), (0, 10)],
        CL_UNORM_INT_101010_2 => &[(22, 10), (12, 10), (2, 10), (0, 2)],
        _ => &[],
    }
}

/// float → unsigned normalised integer of `max` (2^bits − 1): saturate, round to nearest even;
/// NaN becomes 0 (the spec leaves NaN and infinities to the implementation).
pub fn float_to_unorm(x: f32, max: u32) -> u32 {
    if x.is_nan() {
        return 0;
    }
    (x * max as f32).clamp(0.0, max as f32).round_ties_even() as u32
}

/// float → signed normalised integer of `max` (2^(bits−1) − 1), saturating to [−max−1, max].
pub fn float_to_snorm(x: f32, max: i32) -> i32 {
    if x.is_nan() {
        return 0;
    }
    (x * max as f32)
        .clamp(-(max as f32) - 1.0, max as f32)
        .round_ties_even() as i32
}

/// unsigned normalised integer of `max` → float: x / max, correctly rounded (one f32 division).
pub fn unorm_to_float(x: u32, max: u32) -> f32 {
    x as f32 / max as f32
}

/// signed normalised integer of `max` → float: max(−1, x / max).
pub fn snorm_to_float(x: i32, max: i32) -> f32 {
    (x as f32 / max as f32).max(-1.0)
}

/// Linear → sRGB, the curve of environment spec 7.4.5 (NaN and negatives 0, above 1 1).
pub fn linear_to_srgb(y: f32) -> f64 {
    let y = f64::from(y);
    if y.is_nan() || y < 0.0 {
        0.0
    } else if y < 0.0031308 {
        12.92 * y
    } else if y <= 1.0 {
        1.055 * y.powf(1.0 / 2.4) - 0.055
    } else {
        1.0
    }
}

/// sRGB → linear, the inverse curve of 7.4.5.
pub fn srgb_to_linear(r: f32) -> f32 {
    let r = f64::from(r);
    (if r <= 0.04045 {
        r / 12.92
    } else {
        ((r + 0.055) / 1.055).powf(2.4)
    }) as f32
}

/// The RGBA components a write stores, as floats, with sRGB encoding applied (as a value in
/// [0, 1] scaled to 255 later, rounded once).
fn encode_float_channel(
    channel_type: cl_channel_type,
    srgb: bool,
    component: usize,
    x: f32,
) -> u32 {
    if srgb && component < 3 {
        // One rounding of the exact curve value (accuracy bound 0.6 of 7.4.5 met with 0.5).
        return (linear_to_srgb(x) * 255.0).round_ties_even() as u32;
    }
    match channel_type {
        CL_UNORM_INT8 => float_to_unorm(x, 0xff),
        CL_UNORM_INT16 => float_to_unorm(x, 0xffff),
        CL_SNORM_INT8 => float_to_snorm(x, 0x7f) as u32,
        CL_SNORM_INT16 => float_to_snorm(x, 0x7fff) as u32,
        CL_HALF_FLOAT => u32::from(ferrocl_mathlib::half::f32_to_f16(x)),
        _ => x.to_bits(),
    }
}

fn store(bytes: &mut Vec<u8>, size: usize, v: u32) {
    bytes.extend_from_slice(&v.to_le_bytes()[..size]);
}

/// The bytes of one texel of (`order`, `channel_type`) holding `color`, as a kernel write
/// stores it; None for a format not in the format table or a colour of the wrong kind.
pub fn encode(
    order: cl_channel_order,
    channel_type: cl_channel_type,
    color: Color,
) -> Option<Vec<u8>> {
    let components = stored_components(order)?;
    let size = channel_bytes(channel_type)?;
    let mut out = Vec::with_capacity(16);
    match color {
        Color::Float(c) if color_kind(channel_type) == ColorKind::Float => {
            if is_packed(channel_type) {
                let mut word = 0u32;
                for (i, &(shift, bits)) in packed_fields(channel_type).iter().enumerate() {
                    word |= float_to_unorm(c[i], (1 << bits) - 1) << shift;
                }
                store(&mut out, size, word);
            } else {
                let srgb = is_srgb(order);
                for &k in components {
                    store(
                        &mut out,
                        size,
                        encode_float_channel(channel_type, srgb, k, c[k]),
                    );
                }
                // The fourth channel of sRGBx, which reads ignore, holds alpha (linear), as
                // the Khronos CTS's fill reference stores it.
                if channel_slots(order)? > components.len() {
                    store(
                        &mut out,
                        size,
                        encode_float_channel(channel_type, false, 3, c[3]),
                    );
                }
            }
        }
        Color::Int(c) if color_kind(channel_type) == ColorKind::Int => {
            let (lo, hi) = match channel_type {
                CL_SIGNED_INT8 => (i8::MIN.into(), i8::MAX.into()),
                CL_SIGNED_INT16 => (i16::MIN.into(), i16::MAX.into()),
                _ => (i32::MIN, i32::MAX),
            };
            for &k in components {
                store(&mut out, size, c[k].clamp(lo, hi) as u32);
            }
        }
        Color::Uint(c) if color_kind(channel_type) == ColorKind::Uint => {
            let hi = match channel_type {
                CL_UNSIGNED_INT8 => u8::MAX.into(),
                CL_UNSIGNED_INT16 => u16::MAX.into(),
                _ => u32::MAX,
            };
            for &k in components {
                store(&mut out, size, c[k].min(hi));
            }
        }
        _ => return None,
    }
    Some(out)
}

fn load(bytes: &[u8], at: usize, size: usize) -> u32 {
    let mut word = [0u8; 4];
    word[..size].copy_from_slice(&bytes[at..at + size]);
    u32::from_le_bytes(word)
}

fn sign_extend(v: u32, size: usize) -> i32 {
    let shift = 32 - 8 * size as u32;
    ((v << shift) as i32) >> shift
}

/// The colour a kernel read returns for the texel in `bytes` (at least the element size),
/// before filtering: channels converted by 7.4, then placed by 7.7 (missing R, G, B read 0,
/// missing alpha 1; intensity replicated into all four, luminance into R, G, B). None for a
/// format not in the format table.
pub fn decode(
    order: cl_channel_order,
    channel_type: cl_channel_type,
    bytes: &[u8],
) -> Option<Color> {
    let components = stored_components(order)?;
    let size = channel_bytes(channel_type)?;
    let kind = color_kind(channel_type);
    let stored = if is_packed(channel_type) {
        components.len().min(packed_fields(channel_type).len())
    } else {
        components.len()
    };
    if bytes.len()
        < if is_packed(channel_type) {
            size
        } else {
            size * stored
        }
    {
        return None;
    }
    let mut f = [0f32, 0.0, 0.0, 1.0];
    let mut i = [0i32, 0, 0, 1];
    if is_packed(channel_type) {
        let word = load(bytes, 0, size);
        for (n, &(shift, bits)) in packed_fields(channel_type).iter().enumerate() {
            let max = (1u32 << bits) - 1;
            f[n] = unorm_to_float((word >> shift) & max, max);
        }
    } else {
        let srgb = is_srgb(order);
        for (n, &k) in components.iter().enumerate() {
            let raw = load(bytes, n * size, size);
            match kind {
                ColorKind::Float => {
                    f[k] = match channel_type {
                        CL_UNORM_INT8 => unorm_to_float(raw, 0xff),
                        CL_UNORM_INT16 => unorm_to_float(raw, 0xffff),
                        CL_SNORM_INT8 => snorm_to_float(sign_extend(raw, 1), 0x7f),
                        CL_SNORM_INT16 => snorm_to_float(sign_extend(raw, 2), 0x7fff),
                        CL_HALF_FLOAT => ferrocl_mathlib::half::f16_to_f32(raw as u16),
                        _ => f32::from_bits(raw),
                    };
                    if srgb && k < 3 {
                        f[k] = srgb_to_linear(f[k]);
                    }
                }
                ColorKind::Int => i[k] = sign_extend(raw, size),
                ColorKind::Uint => i[k] = raw as i32,
            }
        }
    }
    if matches!(order, CL_INTENSITY) {
        f = [f[0]; 4];
        i = [i[0]; 4];
    } else if matches!(order, CL_LUMINANCE) {
        f = [f[0], f[0], f[0], f[3]];
        i = [i[0], i[0], i[0], i[3]];
    }
    Some(match kind {
        ColorKind::Float => Color::Float(f),
        ColorKind::Int => Color::Int(i),
        ColorKind::Uint => Color::Uint(i.map(|v| v as u32)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(order: u32, ty: u32, color: Color) -> Vec<u8> {
        encode(order, ty, color).unwrap()
    }

    // Every expected value below is worked out by hand from the spec's formulas.
    #[test]
    fn unorm_and_snorm_round_to_nearest_even_and_saturate() {
        // 0.5 × 255 = 127.5 → 128 (even); 1.5/255 × 255 ≈ 1.5 → 2; −1 → 0; 2 → 255; NaN → 0.
        let c = Color::Float([0.5, 1.5 / 255.0, -1.0, 2.0]);
        assert_eq!(enc(CL_RGBA, CL_UNORM_INT8, c), [128, 2, 0, 255]);
        assert_eq!(
            enc(
                CL_RGBA,
                CL_UNORM_INT8,
                Color::Float([f32::NAN, 2.5 / 255.0, 0.0, 1.0])
            ),
            [0, 2, 0, 255]
        );
        // 0.5 × 65535 = 32767.5 → 32768.
        assert_eq!(
            enc(CL_R, CL_UNORM_INT16, Color::Float([0.5, 0.0, 0.0, 0.0])),
            [0x00, 0x80]
        );
        // SNORM8: −1 → −127 (0x81), −2 → −128 (0x80), 0.5 × 127 = 63.5 → 64.
        assert_eq!(
            enc(CL_RGBA, CL_SNORM_INT8, Color::Float([-1.0, -2.0, 0.5, 1.0])),
            [0x81, 0x80, 64, 127]
        );
        // SNORM16: 1 → 32767, −1 → −32767.
        assert_eq!(
            enc(CL_RG, CL_SNORM_INT16, Color::Float([1.0, -1.0, 0.0, 0.0])),
            [0xff, 0x7f, 0x01, 0x80]
        );
    }

    #[test]
    fn channel_orders_place_components() {
        let c = Color::Float([1.0, 0.0, 0.5, 0.2]);
        // R=255, G=0, B=128, A=0.2×255=51.
        assert_eq!(enc(CL_RGBA, CL_UNORM_INT8, c), [255, 0, 128, 51]);
        assert_eq!(enc(CL_BGRA, CL_UNORM_INT8, c), [128, 0, 255, 51]);
        assert_eq!(enc(CL_ARGB, CL_UNORM_INT8, c), [51, 255, 0, 128]);
        assert_eq!(enc(CL_ABGR, CL_UNORM_INT8, c), [51, 128, 0, 255]);
        assert_eq!(enc(CL_A, CL_UNORM_INT8, c), [51]);
        assert_eq!(enc(CL_RA, CL_UNORM_INT8, c), [255, 51]);
        assert_eq!(enc(CL_Rx, CL_UNORM_INT8, c), [255]);
        assert_eq!(enc(CL_RGx, CL_UNORM_INT8, c), [255, 0]);
        assert_eq!(enc(CL_INTENSITY, CL_UNORM_INT8, c), [255]);
        assert_eq!(enc(CL_LUMINANCE, CL_UNORM_INT8, c), [255]);
    }

    #[test]
    fn reads_fill_missing_components() {
        let f = |order, bytes: &[u8]| decode(order, CL_UNORM_INT8, bytes).unwrap();
        assert_eq!(f(CL_R, &[255]), Color::Float([1.0, 0.0, 0.0, 1.0]));
        assert_eq!(f(CL_Rx, &[255]), Color::Float([1.0, 0.0, 0.0, 1.0]));
        assert_eq!(f(CL_A, &[0]), Color::Float([0.0, 0.0, 0.0, 0.0]));
        assert_eq!(f(CL_RA, &[255, 0]), Color::Float([1.0, 0.0, 0.0, 0.0]));
        assert_eq!(f(CL_RG, &[0, 255]), Color::Float([0.0, 1.0, 0.0, 1.0]));
        assert_eq!(f(CL_INTENSITY, &[255]), Color::Float([1.0; 4]));
        assert_eq!(f(CL_LUMINANCE, &[255]), Color::Float([1.0, 1.0, 1.0, 1.0]));
        assert_eq!(
            f(CL_BGRA, &[255, 0, 0, 255]),
            Color::Float([0.0, 0.0, 1.0, 1.0])
        );
        assert_eq!(
            f(CL_ARGB, &[0, 255, 0, 0]),
            Color::Float([1.0, 0.0, 0.0, 0.0])
        );
        assert_eq!(
            decode(CL_RG, CL_SIGNED_INT16, &[0xff, 0xff, 5, 0]),
            Some(Color::Int([-1, 5, 0, 1]))
        );
        assert_eq!(
            decode(CL_R, CL_UNSIGNED_INT32, &[1, 0, 0, 0x80]),
            Some(Color::Uint([0x8000_0001, 0, 0, 1]))
        );
        // 1/255, −128 → −1 (clamped), −127 → −1.
        assert_eq!(
            decode(CL_RGBA, CL_SNORM_INT8, &[0x80, 0x81, 0, 127]),
            Some(Color::Float([-1.0, -1.0, 0.0, 1.0]))
        );
        assert_eq!(unorm_to_float(1, 255), 1.0 / 255.0);
    }

    #[test]
    fn integers_saturate() {
        assert_eq!(
            enc(CL_RGBA, CL_SIGNED_INT8, Color::Int([-200, 200, -5, 127])),
            [0x80, 0x7f, 0xfb, 0x7f]
        );
        assert_eq!(
            enc(CL_RG, CL_UNSIGNED_INT16, Color::Uint([70000, 7, 0, 0])),
            [0xff, 0xff, 7, 0]
        );
        assert_eq!(
            enc(CL_R, CL_SIGNED_INT32, Color::Int([-2, 0, 0, 0])),
            (-2i32).to_le_bytes()
        );
        // A float colour cannot be written to an integer image.
        assert_eq!(encode(CL_R, CL_SIGNED_INT32, Color::Float([0.0; 4])), None);
    }

    #[test]
    fn packed_formats_put_red_in_the_high_bits() {
        // 565: R = 31, G = 0.5 × 63 = 31.5 → 32, B = 0 → 0b11111_100000_00000 = 0xfc00.
        assert_eq!(
            enc(
                CL_RGB,
                CL_UNORM_SHORT_565,
                Color::Float([1.0, 0.5, 0.0, 1.0])
            ),
            0xfc00u16.to_le_bytes()
        );
        // 555: R = 0, G = 31, B = 1/31 × 31 = 1 → 0b0_00000_11111_00001 = 0x03e1.
        assert_eq!(
            enc(
                CL_RGBx,
                CL_UNORM_SHORT_555,
                Color::Float([0.0, 1.0, 1.0 / 31.0, 1.0])
            ),
            0x03e1u16.to_le_bytes()
        );
        // 101010: R = 1023 << 20, G = 0, B = 0.5 × 1023 = 511.5 → 512.
        assert_eq!(
            enc(
                CL_RGB,
                CL_UNORM_INT_101010,
                Color::Float([1.0, 0.0, 0.5, 1.0])
            ),
            ((1023u32 << 20) | 512).to_le_bytes()
        );
        // 101010_2: A = 0.5 × 3 = 1.5 → 2.
        // R = 1023, G = 0, B = 1, A = 2.
        let w = (1023u32 << 22) | (1 << 2) | 2;
        assert_eq!(
            enc(
                CL_RGBA,
                CL_UNORM_INT_101010_2,
                Color::Float([1.0, 0.0, 1.0 / 1023.0, 0.5])
            ),
            w.to_le_bytes()
        );
        assert_eq!(
            decode(CL_RGBA, CL_UNORM_INT_101010_2, &w.to_le_bytes()),
            Some(Color::Float([1.0, 0.0, 1.0 / 1023.0, 2.0 / 3.0]))
        );
        assert_eq!(
            decode(CL_RGB, CL_UNORM_SHORT_565, &0xfc00u16.to_le_bytes()),
            Some(Color::Float([1.0, 32.0 / 63.0, 0.0, 1.0]))
        );
    }

    #[test]
    fn half_rounds_to_nearest_even() {
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even → 1.0 (0x3c00);
        // 1 + 3·2^-11 → 1 + 2^-9 (0x3c02); 65520 → infinity; NaN stays NaN.
        let c = Color::Float([
            1.0 + 2f32.powi(-11),
            1.0 + 3.0 * 2f32.powi(-11),
            65520.0,
            f32::NAN,
        ]);
        let b = enc(CL_RGBA, CL_HALF_FLOAT, c);
        let h: Vec<u16> = b
            .chunks(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
            .collect();
        assert_eq!(&h[..3], &[0x3c00, 0x3c02, 0x7c00]);
        assert!(h[3] & 0x7c00 == 0x7c00 && h[3] & 0x3ff != 0);
        assert_eq!(
            decode(CL_R, CL_HALF_FLOAT, &0x3555u16.to_le_bytes()),
            Some(Color::Float([0.333_251_95, 0.0, 0.0, 1.0]))
        );
    }

    #[test]
    fn srgb_encodes_rgb_only() {
        // 0.5 linear → 1.055 × 0.5^(1/2.4) − 0.055 = 0.735357 → × 255 = 187.516 → 188;
        // 0.001 → 12.92 × 0.001 × 255 = 3.29 → 3; alpha 0.5 stays linear → 128.
        let c = Color::Float([0.5, 0.001, 1.0, 0.5]);
        assert_eq!(enc(CL_sRGBA, CL_UNORM_INT8, c), [188, 3, 255, 128]);
        assert_eq!(enc(CL_sBGRA, CL_UNORM_INT8, c), [255, 3, 188, 128]);
        assert_eq!(enc(CL_sRGBx, CL_UNORM_INT8, c), [188, 3, 255, 128]);
        // 188/255 = 0.737255 → ((0.737255 + 0.055)/1.055)^2.4 = 0.502886.
        let Some(Color::Float(f)) = decode(CL_sRGBA, CL_UNORM_INT8, &[188, 10, 0, 128]) else {
            panic!()
        };
        assert!((f[0] - 0.502_886).abs() < 1e-5, "{}", f[0]);
        // 10/255 = 0.0392157 ≤ 0.04045 → / 12.92 = 0.00303527.
        assert!((f[1] - 0.003_035_27).abs() < 1e-7, "{}", f[1]);
        assert_eq!(f[3], 128.0 / 255.0);
    }

    #[test]
    fn depth_and_float_keep_values() {
        assert_eq!(
            enc(CL_DEPTH, CL_FLOAT, Color::Float([0.25, 9.0, 9.0, 9.0])),
            0.25f32.to_le_bytes()
        );
        assert_eq!(
            enc(CL_DEPTH, CL_UNORM_INT16, Color::Float([1.0, 0.0, 0.0, 0.0])),
            [0xff, 0xff]
        );
        let bits: Vec<u8> = [1.5f32, -0.0, 1e-40, 7.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        assert_eq!(
            decode(CL_RGBA, CL_FLOAT, &bits),
            Some(Color::Float([1.5, -0.0, 1e-40, 7.0]))
        );
    }
}
