//! Image reads on the host, written from the OpenCL SPIR-V environment spec chapter 7 (7.1
//! coordinates, 7.2 addressing and filter modes, 7.5 array layers, 7.8 sampler-less reads) and
//! the OpenCL C spec's border colours: the reference kernel-side reads (codegen's inline image
//! operations) are checked against. Texels are decoded by `pixel.rs` before filtering (sRGB to
//! linear first, as 7.4.5 says). Where the spec leaves a read undefined (`CL_ADDRESS_NONE`
//! outside the image, repeat modes with unnormalised coordinates, linear filtering of integer
//! formats) the reference answers None.

#![allow(non_upper_case_globals)] // CL_sRGB, CL_Rx, … are the spec's names.

use ferrocl_codegen::sampler as bits;
use opencl_sys::*;

use crate::image::ImageDesc;
use crate::pixel::{color_kind, decode, Color, ColorKind};

/// The sampler of a sampler-less read (7.8): unnormalised coordinates, no addressing, nearest.
pub const SAMPLERLESS: u32 = bits::bits(false, bits::ADDRESS_NONE, bits::FILTER_NEAREST);

/// The colour outside the image under `CL_ADDRESS_CLAMP` (OpenCL C spec, "Determining the
/// Border Color or Value"): transparent black for orders with alpha or an ignored channel,
/// opaque black for R, RG, RGB, sRGB and luminance; depth reads 0 (in x).
pub fn border_color(order: cl_channel_order, kind: ColorKind) -> Color {
    let alpha = match order {
        CL_R | CL_RG | CL_RGB | CL_sRGB | CL_LUMINANCE => 1,
        _ => 0,
    };
    match kind {
        ColorKind::Float => Color::Float([0.0, 0.0, 0.0, alpha as f32]),
        ColorKind::Int => Color::Int([0, 0, 0, alpha]),
        ColorKind::Uint => Color::Uint([0, 0, 0, alpha as u32]),
    }
}

/// How many of the coordinates address pixels (the rest select an array layer).
fn pixel_dims(d: &ImageDesc) -> usize {
    match d.image_type {
        CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY => 2,
        CL_MEM_OBJECT_IMAGE3D => 3,
        _ => 1,
    }
}

/// The coordinate that selects a layer of an array, if the image is one.
fn layer_coordinate(d: &ImageDesc) -> Option<usize> {
    match d.image_type {
        CL_MEM_OBJECT_IMAGE1D_ARRAY => Some(1),
        CL_MEM_OBJECT_IMAGE2D_ARRAY => Some(2),
        _ => None,
    }
}

/// One texel, or the border colour outside the image (None where that is undefined).
fn texel(d: &ImageDesc, data: &[u8], at: [i64; 3], addressing: u32) -> Option<Color> {
    let extent = d.extent();
    let inside = (0..3).all(|k| at[k] >= 0 && (at[k] as usize) < extent[k]);
    if !inside {
        return match addressing {
            bits::ADDRESS_CLAMP | bits::ADDRESS_CLAMP_TO_EDGE => {
                Some(border_color(d.format.order, color_kind(d.format.data_type)))
            }
            _ => None,
        };
    }
    let offset = d.offset_of([at[0] as usize, at[1] as usize, at[2] as usize]);
    decode(
        d.format.order,
        d.format.data_type,
        data.get(offset..offset + d.element_size)?,
    )
}

/// The texel locations (i0, i1) and weight `a` of i1 for one coordinate `s` of an image
/// `size` pixels wide, as 7.2 computes them for `addressing` (normalised `s` for the repeat
/// modes). `linear` false: i0 alone.
fn locate(
    s: f32,
    size: usize,
    normalized: bool,
    addressing: u32,
    linear: bool,
) -> Option<(i64, i64, f32)> {
    let n = size as i64;
    let frac = |x: f32| x - x.floor();
    match addressing {
        bits::ADDRESS_REPEAT | bits::ADDRESS_MIRRORED_REPEAT if !normalized => None,
        bits::ADDRESS_REPEAT => {
            let u = (s - s.floor()) * size as f32;
            if !linear {
                let mut i = u.floor() as i64;
                if i > n - 1 {
                    i -= n;
                }
                return Some((i, i, 0.0));
            }
            let mut i0 = (u - 0.5).floor() as i64;
            let mut i1 = i0 + 1;
            if i0 < 0 {
                i0 += n;
            }
            if i1 > n - 1 {
                i1 -= n;
            }
            Some((i0, i1, frac(u - 0.5)))
        }
        bits::ADDRESS_MIRRORED_REPEAT => {
            let mirrored = (s - 2.0 * (0.5 * s).round_ties_even()).abs();
            let u = mirrored * size as f32;
            if !linear {
                let i = (u.floor() as i64).min(n - 1);
                return Some((i, i, 0.0));
            }
            let i0 = (u - 0.5).floor() as i64;
            Some(((i0).max(0), (i0 + 1).min(n - 1), frac(u - 0.5)))
        }
        _ => {
            let u = if normalized { s * size as f32 } else { s };
            let address = |i: i64| match addressing {
                bits::ADDRESS_CLAMP => i.clamp(-1, n),
                bits::ADDRESS_CLAMP_TO_EDGE => i.clamp(0, n - 1),
                _ => i,
            };
            if !linear {
                let i = address(u.floor() as i64);
                return Some((i, i, 0.0));
            }
            let i0 = (u - 0.5).floor() as i64;
            Some((address(i0), address(i0 + 1), frac(u - 0.5)))
        }
    }
}

/// What a sampled read with sampler pattern `sampler` (`abi::sampler`) returns at float
/// coordinates `coord` (s, t, r in the image's dimensions, then the array layer) of the image
/// `d` whose pixel (0, 0, 0) is `data[0]`. Integer coordinates read the same as their float
/// values (exact below 2^24).
pub fn read(d: &ImageDesc, data: &[u8], sampler: u32, coord: [f32; 4]) -> Option<Color> {
    let normalized = sampler & bits::NORMALIZED_COORDS != 0;
    let addressing = sampler & bits::ADDRESS_MASK;
    let linear = sampler & bits::FILTER_MASK == bits::FILTER_LINEAR;
    let kind = color_kind(d.format.data_type);
    if linear && kind != ColorKind::Float {
        return None;
    }
    let extent = d.extent();
    let dims = pixel_dims(d);
    // Per coordinate: the two texel locations and the weight of the second.
    let mut axes = [(0i64, 0i64, 0f32); 3];
    for (k, axis) in axes.iter_mut().enumerate().take(dims) {
        *axis = locate(coord[k], extent[k], normalized, addressing, linear)?;
    }
    if let Some(k) = layer_coordinate(d) {
        // 7.5: the layer is always an unnormalised coordinate, rounded and clamped.
        let layer = (coord[k].round_ties_even() as i64).clamp(0, extent[k] as i64 - 1);
        axes[k] = (layer, layer, 0.0);
    }
    if !linear {
        return texel(d, data, [axes[0].0, axes[1].0, axes[2].0], addressing);
    }
    // The weighted sum of the 2, 4 or 8 texels around the sample point.
    let mut sum = [0f64; 4];
    for corner in 0..(1usize << dims) {
        let mut at = [axes[0].0, axes[1].0, axes[2].0];
        let mut weight = 1f64;
        for (k, &(i0, i1, a)) in axes.iter().enumerate().take(dims) {
            let second = corner >> k & 1 == 1;
            at[k] = if second { i1 } else { i0 };
            weight *= f64::from(if second { a } else { 1.0 - a });
        }
        let Color::Float(t) = texel(d, data, at, addressing)? else {
            return None;
        };
        for c in 0..4 {
            sum[c] += weight * f64::from(t[c]);
        }
    }
    Some(Color::Float(sum.map(|v| v as f32)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::FormatKey;

    fn desc(
        image_type: u32,
        extent: [usize; 4],
        order: u32,
        data_type: u32,
        element: usize,
    ) -> ImageDesc {
        let [w, h, d, a] = extent;
        let row = w * element;
        let slice = match image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row * h,
            _ => 0,
        };
        ImageDesc {
            image_type,
            format: FormatKey { order, data_type },
            element_size: element,
            width: w,
            height: h,
            depth: d,
            array_size: a,
            row_pitch: row,
            slice_pitch: slice,
            num_mip_levels: 0,
            level_offset: 0,
        }
    }

    fn floats(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|f| f.to_le_bytes()).collect()
    }

    /// x of a float read.
    fn x(c: Option<Color>) -> Option<f32> {
        match c? {
            Color::Float(f) => Some(f[0]),
            _ => None,
        }
    }

    fn s(normalized: bool, addressing: u32, filter: u32) -> u32 {
        bits::bits(normalized, addressing, filter)
    }

    // Every expected value below is worked out by hand from the formulas of 7.2.
    #[test]
    fn clamp_modes_and_none_with_nearest_and_linear() {
        // A 1D image of four R float texels 10, 20, 30, 40.
        let d = desc(CL_MEM_OBJECT_IMAGE1D, [4, 0, 0, 0], CL_R, CL_FLOAT, 4);
        let data = floats(&[10.0, 20.0, 30.0, 40.0]);
        let at = |sampler, u: f32| x(read(&d, &data, sampler, [u, 0.0, 0.0, 0.0]));
        let (nearest, linear) = (bits::FILTER_NEAREST, bits::FILTER_LINEAR);
        let edge = bits::ADDRESS_CLAMP_TO_EDGE;
        assert_eq!(at(s(false, edge, nearest), 2.7), Some(30.0));
        assert_eq!(at(s(false, edge, nearest), -3.0), Some(10.0));
        assert_eq!(at(s(false, edge, nearest), 9.0), Some(40.0));
        // Normalised: 0.6 × 4 = 2.4 → texel 2.
        assert_eq!(at(s(true, edge, nearest), 0.6), Some(30.0));
        // CLAMP: floor(−0.5) = −1 is outside, the border of R is (0, 0, 0, 1).
        assert_eq!(
            read(
                &d,
                &data,
                s(false, bits::ADDRESS_CLAMP, nearest),
                [-0.5, 0.0, 0.0, 0.0]
            ),
            Some(Color::Float([0.0, 0.0, 0.0, 1.0]))
        );
        assert_eq!(at(s(false, bits::ADDRESS_CLAMP, nearest), 4.2), Some(0.0));
        // NONE outside the image is undefined; sampler-less reads inside are exact.
        assert_eq!(at(s(false, bits::ADDRESS_NONE, nearest), 4.0), None);
        assert_eq!(at(SAMPLERLESS, 3.0), Some(40.0));
        // Linear: u = 1 → u − 0.5 = 0.5 → i0 = 0, i1 = 1, a = 0.5 → 15.
        assert_eq!(at(s(false, edge, linear), 1.0), Some(15.0));
        // u = 0.25 → floor(−0.25) = −1 → both clamp to 0 → 10.
        assert_eq!(at(s(false, edge, linear), 0.25), Some(10.0));
        // CLAMP keeps −1: 0.25 × border 0 + 0.75 × 10 = 7.5 (a = frac(−0.25) = 0.75).
        assert_eq!(at(s(false, bits::ADDRESS_CLAMP, linear), 0.25), Some(7.5));
    }

    #[test]
    fn repeat_and_mirrored_repeat() {
        let d = desc(CL_MEM_OBJECT_IMAGE1D, [4, 0, 0, 0], CL_R, CL_FLOAT, 4);
        let data = floats(&[10.0, 20.0, 30.0, 40.0]);
        let at = |sampler, u: f32| x(read(&d, &data, sampler, [u, 0.0, 0.0, 0.0]));
        let (nearest, linear) = (bits::FILTER_NEAREST, bits::FILTER_LINEAR);
        let (rep, mir) = (bits::ADDRESS_REPEAT, bits::ADDRESS_MIRRORED_REPEAT);
        // Repeat: 1.3 → 0.3 × 4 = 1.2 → 1; −0.1 → 0.9 × 4 = 3.6 → 3.
        assert_eq!(at(s(true, rep, nearest), 1.3), Some(20.0));
        assert_eq!(at(s(true, rep, nearest), -0.1), Some(40.0));
        // Repeat linear at 0: i0 = floor(−0.5) = −1 → 3, i1 = 0, a = 0.5 → (40 + 10) / 2.
        assert_eq!(at(s(true, rep, linear), 0.0), Some(25.0));
        // Mirrored: 1.1 → |1.1 − 2 rint(0.55)| = 0.9 → 3.6 → 3; −0.3 → 0.3 → 1.2 → 1.
        assert_eq!(at(s(true, mir, nearest), 1.1), Some(40.0));
        assert_eq!(at(s(true, mir, nearest), -0.3), Some(20.0));
        // Mirrored linear at 0: i0 = max(−1, 0) = 0, i1 = 0 → 10.
        assert_eq!(at(s(true, mir, linear), 0.0), Some(10.0));
        // Mirrored linear at 0.5: u = 2 → i0 = 1, i1 = 2, a = 0.5 → 25.
        assert_eq!(at(s(true, mir, linear), 0.5), Some(25.0));
        // The repeat modes need normalised coordinates.
        assert_eq!(at(s(false, rep, nearest), 1.0), None);
    }

    #[test]
    fn bilinear_and_trilinear_weights() {
        // 2×2 RGBA8: red, green / blue, white.
        let d = desc(
            CL_MEM_OBJECT_IMAGE2D,
            [2, 2, 0, 0],
            CL_RGBA,
            CL_UNORM_INT8,
            4,
        );
        let data = [
            255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255,
        ];
        let edge_linear = s(false, bits::ADDRESS_CLAMP_TO_EDGE, bits::FILTER_LINEAR);
        // The centre: a = b = 0.5, a quarter of each.
        assert_eq!(
            read(&d, &data, edge_linear, [1.0, 1.0, 0.0, 0.0]),
            Some(Color::Float([0.5, 0.5, 0.5, 1.0]))
        );
        // (0.75, 1.25): i0 = 0, i1 = 1, a = frac(0.25) = 0.25; j0 = 0, j1 = 1, b = 0.75 →
        // weights 0.1875 red, 0.0625 green, 0.5625 blue, 0.1875 white.
        let Some(Color::Float(c)) = read(&d, &data, edge_linear, [0.75, 1.25, 0.0, 0.0]) else {
            panic!()
        };
        let want = [
            0.75 * 0.25 * 1.0 + 0.25 * 0.75 * 1.0,
            0.25 * 0.25 * 1.0 + 0.25 * 0.75 * 1.0,
            0.75 * 0.75 * 1.0 + 0.25 * 0.75 * 1.0,
            1.0,
        ];
        for k in 0..4 {
            assert!(
                (c[k] - want[k]).abs() < 1e-6,
                "{k}: {} vs {}",
                c[k],
                want[k]
            );
        }
        // 2×2×2 R float 0…7: the centre averages all eight (3.5).
        let d3 = desc(CL_MEM_OBJECT_IMAGE3D, [2, 2, 2, 0], CL_R, CL_FLOAT, 4);
        let data3 = floats(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert_eq!(
            x(read(&d3, &data3, edge_linear, [1.0, 1.0, 1.0, 0.0])),
            Some(3.5)
        );
        // Nearest at (1.5, 0.2, 1.9): texel (1, 0, 1) = 5.
        let edge_nearest = s(false, bits::ADDRESS_CLAMP_TO_EDGE, bits::FILTER_NEAREST);
        assert_eq!(
            x(read(&d3, &data3, edge_nearest, [1.5, 0.2, 1.9, 0.0])),
            Some(5.0)
        );
    }

    #[test]
    fn array_layers_borders_srgb_and_integers() {
        // A 2D array of two 1×1 layers: the layer is rint(r) clamped, never normalised.
        let d = desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, [1, 1, 0, 2], CL_R, CL_FLOAT, 4);
        let data = floats(&[1.0, 2.0]);
        let norm = s(true, bits::ADDRESS_CLAMP_TO_EDGE, bits::FILTER_NEAREST);
        assert_eq!(x(read(&d, &data, norm, [0.5, 0.5, 0.4, 0.0])), Some(1.0));
        assert_eq!(x(read(&d, &data, norm, [0.5, 0.5, 0.6, 0.0])), Some(2.0));
        assert_eq!(x(read(&d, &data, norm, [0.5, 0.5, 7.0, 0.0])), Some(2.0));
        // 1D arrays take the layer from t; 1.5 rounds to even (2), clamped to 1.
        let d1 = desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, [1, 0, 0, 2], CL_R, CL_FLOAT, 4);
        assert_eq!(
            x(read(&d1, &data, SAMPLERLESS, [0.0, 1.5, 0.0, 0.0])),
            Some(2.0)
        );
        // Borders: Rx has transparent black, integers read integer borders.
        assert_eq!(
            border_color(CL_Rx, ColorKind::Float),
            Color::Float([0.0; 4])
        );
        assert_eq!(
            border_color(CL_RGB, ColorKind::Uint),
            Color::Uint([0, 0, 0, 1])
        );
        let di = desc(
            CL_MEM_OBJECT_IMAGE1D,
            [2, 0, 0, 0],
            CL_RGBA,
            CL_SIGNED_INT8,
            4,
        );
        let clamp = s(false, bits::ADDRESS_CLAMP, bits::FILTER_NEAREST);
        let idata = [1, 2, 3, 4, 0xff, 0xfe, 0, 0];
        assert_eq!(
            read(&di, &idata, clamp, [1.0, 0.0, 0.0, 0.0]),
            Some(Color::Int([-1, -2, 0, 0]))
        );
        assert_eq!(
            read(&di, &idata, clamp, [-1.0, 0.0, 0.0, 0.0]),
            Some(Color::Int([0; 4]))
        );
        // Linear filtering of an integer image is undefined.
        let lin = s(false, bits::ADDRESS_CLAMP, bits::FILTER_LINEAR);
        assert_eq!(read(&di, &idata, lin, [1.0, 0.0, 0.0, 0.0]), None);
        // sRGB converts to linear before filtering: 0 and 255 average to 0.5, not to the
        // linear value of sRGB 127.5.
        let ds = desc(
            CL_MEM_OBJECT_IMAGE1D,
            [2, 0, 0, 0],
            CL_sRGBA,
            CL_UNORM_INT8,
            4,
        );
        let sdata = [0, 0, 0, 255, 255, 255, 255, 255];
        let edge_linear = s(false, bits::ADDRESS_CLAMP_TO_EDGE, bits::FILTER_LINEAR);
        assert_eq!(
            read(&ds, &sdata, edge_linear, [1.0, 0.0, 0.0, 0.0]),
            Some(Color::Float([0.5, 0.5, 0.5, 1.0]))
        );
    }
}
