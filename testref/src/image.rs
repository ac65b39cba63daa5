//! Image references for the kernel-side image tests, written from the OpenCL SPIR-V environment
//! spec chapter 7 and sharing no code with Ferrocl's (runtime `pixel.rs`, codegen's inline image
//! operations): texel decoding and encoding (7.4 conversion rules, 7.7 placement; halves through
//! this crate's libgcc conversion), the border colour of `CL_ADDRESS_CLAMP`, and sampling (7.2
//! addressing and filter modes) of 1D, 2D and 3D images over a caller's texel lookup.

#![allow(non_upper_case_globals)] // CL_sRGBA and friends are the spec's names.

use opencl_sys::*;

/// Bytes of one stored channel (of the whole element for the packed types) and the RGBA
/// components (0 = R … 3 = A) the stored channels hold, in memory order. sRGBx stores four
/// bytes, the fourth holding alpha as written (the Khronos CTS's layout).
pub fn layout(order: cl_channel_order, ty: cl_channel_type) -> (usize, &'static [usize]) {
    let size = match ty {
        CL_UNORM_INT8 | CL_SNORM_INT8 | CL_SIGNED_INT8 | CL_UNSIGNED_INT8 => 1,
        CL_UNORM_INT16 | CL_SNORM_INT16 | CL_SIGNED_INT16 | CL_UNSIGNED_INT16 | CL_HALF_FLOAT => 2,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 => 2,
        _ => 4,
    };
    let comps: &'static [usize] = match order {
        CL_A => &[3],
        CL_RG | CL_RGx => &[0, 1],
        CL_RA => &[0, 3],
        CL_RGB | CL_RGBx | CL_sRGB => &[0, 1, 2],
        CL_RGBA | CL_sRGBA | CL_sRGBx => &[0, 1, 2, 3],
        CL_BGRA | CL_sBGRA => &[2, 1, 0, 3],
        CL_ARGB => &[3, 0, 1, 2],
        CL_ABGR => &[3, 2, 1, 0],
        _ => &[0],
    };
    (size, comps)
}

/// Bytes of one texel.
pub fn texel_bytes(order: cl_channel_order, ty: cl_channel_type) -> usize {
    let (size, comps) = layout(order, ty);
    if matches!(
        ty,
        CL_UNORM_SHORT_565 | CL_UNORM_SHORT_555 | CL_UNORM_INT_101010
    ) {
        size
    } else {
        size * comps.len()
    }
}

/// 7.4 then 7.7: the float colour a read returns for one texel's bytes (normalised, half and
/// float types; no sRGB conversion).
pub fn decode_float(order: cl_channel_order, ty: cl_channel_type, b: &[u8]) -> [f32; 4] {
    let (size, comps) = layout(order, ty);
    let word = |at: usize| -> u32 {
        let mut w = [0u8; 4];
        w[..size].copy_from_slice(&b[at..at + size]);
        u32::from_le_bytes(w)
    };
    let mut c = [0.0, 0.0, 0.0, 1.0];
    if ty == CL_UNORM_SHORT_565 {
        let v = word(0);
        return [
            ((v >> 11) & 31) as f32 / 31.0,
            ((v >> 5) & 63) as f32 / 63.0,
            (v & 31) as f32 / 31.0,
            1.0,
        ];
    }
    for (j, &k) in comps.iter().enumerate() {
        let raw = word(j * size);
        c[k] = match ty {
            CL_UNORM_INT8 => raw as f32 / 255.0,
            CL_UNORM_INT16 => raw as f32 / 65535.0,
            CL_SNORM_INT8 => (raw as u8 as i8 as f32 / 127.0).max(-1.0),
            CL_SNORM_INT16 => (raw as u16 as i16 as f32 / 32767.0).max(-1.0),
            // Exact: every half is a float.
            CL_HALF_FLOAT => crate::f16_to_f64(raw as u16) as f32,
            _ => f32::from_bits(raw),
        };
    }
    match order {
        CL_INTENSITY => [c[0]; 4],
        CL_LUMINANCE => [c[0], c[0], c[0], 1.0],
        _ => c,
    }
}

/// 7.4 then 7.7 for integer formats: the 32-bit components `read_imagei` returns (the bits
/// `read_imageui` returns, for unsigned types).
pub fn decode_int(order: cl_channel_order, ty: cl_channel_type, b: &[u8]) -> [i32; 4] {
    let (size, comps) = layout(order, ty);
    let mut c = [0, 0, 0, 1];
    for (j, &k) in comps.iter().enumerate() {
        let at = j * size;
        c[k] = match ty {
            CL_SIGNED_INT8 => i32::from(b[at] as i8),
            CL_UNSIGNED_INT8 => i32::from(b[at]),
            CL_SIGNED_INT16 => i32::from(i16::from_le_bytes([b[at], b[at + 1]])),
            CL_UNSIGNED_INT16 => i32::from(u16::from_le_bytes([b[at], b[at + 1]])),
            _ => i32::from_le_bytes(b[at..at + 4].try_into().unwrap()),
        };
    }
    c
}

/// 7.4: the bytes a float write stores (normalised types round to nearest even after
/// saturating; float stores the bits). NaN is left to the conversion of `as` (0).
pub fn encode_float(order: cl_channel_order, ty: cl_channel_type, c: [f32; 4]) -> Vec<u8> {
    let (size, comps) = layout(order, ty);
    let mut out = Vec::new();
    for &k in comps {
        let x = c[k];
        let v: u32 = match ty {
            CL_UNORM_INT8 => (x * 255.0).clamp(0.0, 255.0).round_ties_even() as u32,
            CL_UNORM_INT16 => (x * 65535.0).clamp(0.0, 65535.0).round_ties_even() as u32,
            CL_SNORM_INT8 => (x * 127.0).clamp(-128.0, 127.0).round_ties_even() as i32 as u32,
            CL_SNORM_INT16 => {
                (x * 32767.0).clamp(-32768.0, 32767.0).round_ties_even() as i32 as u32
            }
            _ => x.to_bits(),
        };
        out.extend_from_slice(&v.to_le_bytes()[..size]);
    }
    out
}

/// Whether the `CL_ADDRESS_CLAMP` border colour of `order` has alpha 1 (opaque black) rather
/// than 0 (transparent black): the orders without an alpha channel. The OpenCL C spec
/// ("Determining the Border Color or Value") names R, RG, RGB and luminance; the Khronos CTS
/// (`has_alpha` of its image helpers), which conformance is judged by, treats the `x` orders,
/// sRGB and depth as alpha-less too, and so do Ferrocl's kernels.
pub fn border_alpha_is_one(order: cl_channel_order) -> bool {
    matches!(
        order,
        CL_R | CL_RG
            | CL_RGB
            | CL_LUMINANCE
            | CL_sRGB
            | CL_Rx
            | CL_RGx
            | CL_RGBx
            | CL_sRGBx
            | CL_DEPTH
    )
}

/// The border colour of `order` as `read_imagef` returns it (integer reads: the same values
/// as integers).
pub fn border_color(order: cl_channel_order) -> [f32; 4] {
    [
        0.0,
        0.0,
        0.0,
        f32::from(u8::from(border_alpha_is_one(order))),
    ]
}

/// A sampler's addressing mode (7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    None,
    ClampToEdge,
    Clamp,
    Repeat,
    MirroredRepeat,
}

impl Addressing {
    /// The mode of a `cl_addressing_mode`.
    pub fn of(mode: cl_addressing_mode) -> Addressing {
        match mode {
            CL_ADDRESS_CLAMP_TO_EDGE => Addressing::ClampToEdge,
            CL_ADDRESS_CLAMP => Addressing::Clamp,
            CL_ADDRESS_REPEAT => Addressing::Repeat,
            CL_ADDRESS_MIRRORED_REPEAT => Addressing::MirroredRepeat,
            _ => Addressing::None,
        }
    }
}

/// The sampler state 7.2 reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub normalized: bool,
    pub addressing: Addressing,
    /// `CL_FILTER_LINEAR` (else nearest).
    pub linear: bool,
}

/// The texels one coordinate `s` selects in an image `size` texels wide and the weight of
/// each (7.2.1 nearest: one, weight 1; 7.2.2 linear: i0 with 1 − a, i1 with a). An index is
/// None outside the image: the border colour under `CL_ADDRESS_CLAMP`, undefined under
/// `CL_ADDRESS_NONE`. None as a whole where 7.2 leaves the read undefined (the repeat modes
/// with unnormalised coordinates).
pub fn taps(sampler: Sampler, s: f32, size: usize) -> Option<Vec<(Option<usize>, f32)>> {
    let n = size as f32;
    let last = size as i64 - 1;
    let u = match sampler.addressing {
        Addressing::Repeat | Addressing::MirroredRepeat if !sampler.normalized => return None,
        Addressing::Repeat => (s - s.floor()) * n,
        Addressing::MirroredRepeat => (s - 2.0 * (0.5 * s).round_ties_even()).abs() * n,
        _ if sampler.normalized => s * n,
        _ => s,
    };
    let address = |i: i64| -> Option<usize> {
        match sampler.addressing {
            Addressing::Repeat if i < 0 => Some((i + size as i64) as usize),
            Addressing::Repeat if i > last => Some((i - size as i64) as usize),
            Addressing::ClampToEdge | Addressing::MirroredRepeat => Some(i.clamp(0, last) as usize),
            _ => (0..=last).contains(&i).then_some(i as usize),
        }
    };
    Some(if sampler.linear {
        let v = u - 0.5;
        let i0 = v.floor() as i64;
        let a = v - v.floor();
        vec![(address(i0), 1.0 - a), (address(i0 + 1), a)]
    } else {
        vec![(address(u.floor() as i64), 1.0)]
    })
}

/// A sampled read of a 1D, 2D or 3D image (`coord` and `size` have one entry per dimension;
/// array layers are the caller's, in `fetch`): the texel `fetch` gives for the location 7.2
/// selects, or the weighted sum of the 2, 4 or 8 around it, corners in order with x varying
/// fastest, weights and sums in f32. Outside the image the texel is `border`. None where 7.2
/// leaves the read undefined (outside under `CL_ADDRESS_NONE`, the repeat modes with
/// unnormalised coordinates).
pub fn sample(
    sampler: Sampler,
    coord: &[f32],
    size: &[usize],
    border: [f32; 4],
    fetch: impl Fn(&[usize]) -> [f32; 4],
) -> Option<[f32; 4]> {
    let per: Vec<Vec<(Option<usize>, f32)>> = coord
        .iter()
        .zip(size)
        .map(|(&s, &n)| taps(sampler, s, n))
        .collect::<Option<_>>()?;
    let corners: usize = per.iter().map(Vec::len).product();
    let mut sum = [0.0f32; 4];
    let mut at = vec![0usize; per.len()];
    for c in 0..corners {
        let mut weight = 1.0f32;
        let mut rest = c;
        let mut outside = false;
        for (k, t) in per.iter().enumerate() {
            let (i, w) = t[rest % t.len()];
            rest /= t.len();
            match i {
                Some(i) => at[k] = i,
                None => outside = true,
            }
            weight *= w;
        }
        let texel = if outside {
            if sampler.addressing != Addressing::Clamp {
                return None;
            }
            border
        } else {
            fetch(&at)
        };
        if !sampler.linear {
            return Some(texel);
        }
        for k in 0..4 {
            sum[k] += texel[k] * weight;
        }
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(normalized: bool, addressing: Addressing, linear: bool) -> Sampler {
        Sampler {
            normalized,
            addressing,
            linear,
        }
    }

    /// x of a read of the 1D image 10, 20, 30, 40 (red, float).
    fn at(sampler: Sampler, u: f32) -> Option<f32> {
        let texels = [10.0, 20.0, 30.0, 40.0];
        sample(sampler, &[u], &[4], [0.0, 0.0, 0.0, 1.0], |i| {
            [texels[i[0]], 0.0, 0.0, 1.0]
        })
        .map(|c| c[0])
    }

    // Every expected value below is worked out by hand from the formulas of 7.2.
    #[test]
    fn clamp_modes_and_none_with_nearest_and_linear() {
        use Addressing::*;
        assert_eq!(at(s(false, ClampToEdge, false), 2.7), Some(30.0));
        assert_eq!(at(s(false, ClampToEdge, false), -3.0), Some(10.0));
        assert_eq!(at(s(false, ClampToEdge, false), 9.0), Some(40.0));
        // Normalised: 0.6 × 4 = 2.4 → texel 2.
        assert_eq!(at(s(true, ClampToEdge, false), 0.6), Some(30.0));
        // CLAMP: floor(−0.5) = −1 is outside: the border, 0 in x.
        assert_eq!(at(s(false, Clamp, false), -0.5), Some(0.0));
        assert_eq!(at(s(false, Clamp, false), 4.2), Some(0.0));
        // NONE outside the image is undefined; inside it reads the texel.
        assert_eq!(at(s(false, None, false), 4.0), Option::None);
        assert_eq!(at(s(false, None, false), 3.0), Some(40.0));
        // Linear: u = 1 → u − 0.5 = 0.5 → i0 = 0, i1 = 1, a = 0.5 → 15.
        assert_eq!(at(s(false, ClampToEdge, true), 1.0), Some(15.0));
        // u = 0.25 → floor(−0.25) = −1 → both clamp to 0 → 10.
        assert_eq!(at(s(false, ClampToEdge, true), 0.25), Some(10.0));
        // CLAMP keeps −1: 0.25 × border 0 + 0.75 × 10 = 7.5 (a = frac(−0.25) = 0.75).
        assert_eq!(at(s(false, Clamp, true), 0.25), Some(7.5));
    }

    #[test]
    fn repeat_and_mirrored_repeat() {
        use Addressing::*;
        // Repeat: 1.3 → 0.3 × 4 = 1.2 → 1; −0.1 → 0.9 × 4 = 3.6 → 3.
        assert_eq!(at(s(true, Repeat, false), 1.3), Some(20.0));
        assert_eq!(at(s(true, Repeat, false), -0.1), Some(40.0));
        // Repeat linear at 0: i0 = floor(−0.5) = −1 → 3, i1 = 0, a = 0.5 → (40 + 10) / 2.
        assert_eq!(at(s(true, Repeat, true), 0.0), Some(25.0));
        // Mirrored: 1.1 → |1.1 − 2 rint(0.55)| = 0.9 → 3.6 → 3; −0.3 → 0.3 → 1.2 → 1.
        assert_eq!(at(s(true, MirroredRepeat, false), 1.1), Some(40.0));
        assert_eq!(at(s(true, MirroredRepeat, false), -0.3), Some(20.0));
        // Mirrored linear at 0: i0 = max(−1, 0) = 0, i1 = 0 → 10.
        assert_eq!(at(s(true, MirroredRepeat, true), 0.0), Some(10.0));
        // Mirrored linear at 0.5: u = 2 → i0 = 1, i1 = 2, a = 0.5 → 25.
        assert_eq!(at(s(true, MirroredRepeat, true), 0.5), Some(25.0));
        // The repeat modes need normalised coordinates.
        assert_eq!(at(s(false, Repeat, false), 1.0), Option::None);
    }

    #[test]
    fn bilinear_and_trilinear_weights() {
        // 2×2 RGBA8: red, green / blue, white.
        let data: [u8; 16] = [
            255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255,
        ];
        let texel = |i: &[usize]| {
            let at = (i[1] * 2 + i[0]) * 4;
            decode_float(CL_RGBA, CL_UNORM_INT8, &data[at..at + 4])
        };
        let linear = s(false, Addressing::ClampToEdge, true);
        let border = border_color(CL_RGBA);
        // The centre: a = b = 0.5, a quarter of each.
        assert_eq!(
            sample(linear, &[1.0, 1.0], &[2, 2], border, texel),
            Some([0.5, 0.5, 0.5, 1.0])
        );
        // (0.75, 1.25): i0 = 0, i1 = 1, a = 0.25; j0 = 0, j1 = 1, b = 0.75 → weights 0.1875
        // red, 0.0625 green, 0.5625 blue, 0.1875 white.
        let c = sample(linear, &[0.75, 1.25], &[2, 2], border, texel).unwrap();
        let want = [0.375, 0.25, 0.75, 1.0];
        for k in 0..4 {
            assert!(
                (c[k] - want[k]).abs() < 1e-6,
                "{k}: {} vs {}",
                c[k],
                want[k]
            );
        }
        // 2×2×2 R float 0…7: the centre averages all eight (3.5); nearest at (1.5, 0.2, 1.9)
        // is texel (1, 0, 1) = 5.
        let cube = |i: &[usize]| [(i[2] * 4 + i[1] * 2 + i[0]) as f32, 0.0, 0.0, 1.0];
        assert_eq!(
            sample(linear, &[1.0, 1.0, 1.0], &[2, 2, 2], border, cube).map(|c| c[0]),
            Some(3.5)
        );
        let nearest = s(false, Addressing::ClampToEdge, false);
        assert_eq!(
            sample(nearest, &[1.5, 0.2, 1.9], &[2, 2, 2], border, cube).map(|c| c[0]),
            Some(5.0)
        );
    }

    #[test]
    fn borders_and_texels() {
        // Transparent black for orders with alpha, opaque black for those without (the x
        // orders as the CTS reads them, as Ferrocl's kernels produce them).
        assert_eq!(border_color(CL_RGBA), [0.0; 4]);
        assert_eq!(border_color(CL_A), [0.0; 4]);
        assert_eq!(border_color(CL_INTENSITY), [0.0; 4]);
        assert_eq!(border_color(CL_R), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(border_color(CL_Rx), [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(border_color(CL_RGB), [0.0, 0.0, 0.0, 1.0]);
        // Decoding places channels and fills the missing ones with (0, 0, 0, 1).
        assert_eq!(
            decode_float(CL_BGRA, CL_UNORM_INT8, &[0, 51, 255, 0]),
            [1.0, 0.2, 0.0, 0.0]
        );
        assert_eq!(
            decode_float(CL_RG, CL_HALF_FLOAT, &[0x00, 0x3c, 0x00, 0xc0]),
            [1.0, -2.0, 0.0, 1.0]
        );
        assert_eq!(
            decode_float(CL_LUMINANCE, CL_UNORM_INT8, &[255]),
            [1.0, 1.0, 1.0, 1.0]
        );
        assert_eq!(
            decode_float(CL_RA, CL_SNORM_INT8, &[0x80, 127]),
            [-1.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(
            decode_int(CL_RGBA, CL_SIGNED_INT8, &[1, 0xff, 0x80, 0]),
            [1, -1, -128, 0]
        );
        assert_eq!(
            encode_float(CL_RGBA, CL_UNORM_INT8, [0.5, 2.0, -1.0, 1.0 / 255.0]),
            [128, 255, 0, 1]
        );
        assert_eq!(texel_bytes(CL_RGB, CL_UNORM_SHORT_565), 2);
        assert_eq!(texel_bytes(CL_sRGBx, CL_UNORM_INT8), 4);
    }
}
