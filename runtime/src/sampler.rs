//! Sampler objects: how a kernel's sampled image reads address and filter, and how they choose
//! mip levels (cl_khr_mipmap_image: the mip filter and the lod range), checked when the sampler
//! is created and handed to kernels as the record codegen's `abi::SamplerDescriptor` defines
//! (the bits of OpenCL C's `CLK_*` constants, the mip filter bit, the lod range exactly).

use std::sync::Arc;

use ferrocl_codegen::{sampler as bits, SamplerDescriptor};
use opencl_sys::*;

use crate::context::Context;
use crate::object::{Base, CLResult, Tag};

#[repr(C)]
pub struct Sampler {
    base: Base,
    pub context: Arc<Context>,
    pub normalized_coords: bool,
    pub addressing_mode: cl_addressing_mode,
    pub filter_mode: cl_filter_mode,
    /// `CL_SAMPLER_MIP_FILTER_MODE_KHR`.
    pub mip_filter_mode: cl_filter_mode,
    /// `CL_SAMPLER_LOD_MIN_KHR` and `CL_SAMPLER_LOD_MAX_KHR`.
    pub lod_min: f32,
    pub lod_max: f32,
    /// `CL_SAMPLER_PROPERTIES`: the list as given to clCreateSamplerWithProperties (with its
    /// terminator), empty otherwise.
    pub properties: Vec<cl_sampler_properties>,
}

/// The mip parameters of a sampler (cl_khr_mipmap_image); [`MipParams::DEFAULT`] is what
/// `clCreateSampler` and literal samplers get.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MipParams {
    pub filter: cl_filter_mode,
    pub lod_min: f32,
    pub lod_max: f32,
}

impl MipParams {
    /// Nearest, lod range [0, MAXFLOAT] (API spec, sampler properties table).
    pub const DEFAULT: MipParams = MipParams {
        filter: CL_FILTER_NEAREST,
        lod_min: 0.0,
        lod_max: f32::MAX,
    };
}
crate::cl_object!(Sampler, Sampler, CL_INVALID_SAMPLER);

/// The `abi::sampler` addressing bits of a CL addressing mode.
fn address_bits(mode: cl_addressing_mode) -> Option<u32> {
    Some(match mode {
        CL_ADDRESS_NONE => bits::ADDRESS_NONE,
        CL_ADDRESS_CLAMP_TO_EDGE => bits::ADDRESS_CLAMP_TO_EDGE,
        CL_ADDRESS_CLAMP => bits::ADDRESS_CLAMP,
        CL_ADDRESS_REPEAT => bits::ADDRESS_REPEAT,
        CL_ADDRESS_MIRRORED_REPEAT => bits::ADDRESS_MIRRORED_REPEAT,
        _ => return None,
    })
}

fn filter_bits(mode: cl_filter_mode) -> Option<u32> {
    Some(match mode {
        CL_FILTER_NEAREST => bits::FILTER_NEAREST,
        CL_FILTER_LINEAR => bits::FILTER_LINEAR,
        _ => return None,
    })
}

impl Sampler {
    /// `clCreateSampler`: CL_INVALID_OPERATION when a device of the context has no images,
    /// CL_INVALID_VALUE for an unknown mode or a normalised-coordinates value other than
    /// CL_TRUE or CL_FALSE.
    pub fn new(
        context: Arc<Context>,
        normalized_coords: cl_bool,
        addressing_mode: cl_addressing_mode,
        filter_mode: cl_filter_mode,
        properties: Vec<cl_sampler_properties>,
    ) -> CLResult<Arc<Sampler>> {
        Self::with_mip(
            context,
            normalized_coords,
            addressing_mode,
            filter_mode,
            MipParams::DEFAULT,
            properties,
        )
    }

    /// [`Sampler::new`] with mip parameters: CL_INVALID_VALUE for an unknown mip filter or a
    /// NaN lod bound.
    fn with_mip(
        context: Arc<Context>,
        normalized_coords: cl_bool,
        addressing_mode: cl_addressing_mode,
        filter_mode: cl_filter_mode,
        mip: MipParams,
        properties: Vec<cl_sampler_properties>,
    ) -> CLResult<Arc<Sampler>> {
        if !crate::image::context_has_images(&context) {
            return Err(CL_INVALID_OPERATION);
        }
        if normalized_coords > CL_TRUE
            || address_bits(addressing_mode).is_none()
            || filter_bits(filter_mode).is_none()
            || filter_bits(mip.filter).is_none()
            || mip.lod_min.is_nan()
            || mip.lod_max.is_nan()
        {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Arc::new(Sampler {
            base: Base::new(Tag::Sampler),
            context,
            normalized_coords: normalized_coords == CL_TRUE,
            addressing_mode,
            filter_mode,
            mip_filter_mode: mip.filter,
            lod_min: mip.lod_min,
            lod_max: mip.lod_max,
            properties,
        }))
    }

    /// `clCreateSamplerWithProperties`: `pairs` are the (name, value) pairs of the list, `raw`
    /// the list as given. Unnamed properties take their defaults (normalised coordinates,
    /// CL_ADDRESS_CLAMP, CL_FILTER_NEAREST, and [`MipParams::DEFAULT`]); an unknown or
    /// repeated name is CL_INVALID_VALUE, and so are the mip properties in a context whose
    /// devices lack cl_khr_mipmap_image. A lod bound is a `cl_float` in the value's low 32
    /// bits (the way the Intel runtime reads it: a union of the property and a float).
    pub fn with_properties(
        context: Arc<Context>,
        pairs: &[(cl_sampler_properties, cl_sampler_properties)],
        raw: Vec<cl_sampler_properties>,
    ) -> CLResult<Arc<Sampler>> {
        let mut normalized = None;
        let mut addressing = None;
        let mut filter = None;
        let mut mip_filter = None;
        let mut lod_min = None;
        let mut lod_max = None;
        let mipmaps = crate::image::KernelImageSupport::of(&context).mipmaps;
        for &(name, value) in pairs {
            let slot = match name as u32 {
                CL_SAMPLER_NORMALIZED_COORDS => &mut normalized,
                CL_SAMPLER_ADDRESSING_MODE => &mut addressing,
                CL_SAMPLER_FILTER_MODE => &mut filter,
                CL_SAMPLER_MIP_FILTER_MODE if mipmaps => &mut mip_filter,
                CL_SAMPLER_LOD_MIN if mipmaps => &mut lod_min,
                CL_SAMPLER_LOD_MAX if mipmaps => &mut lod_max,
                _ => return Err(CL_INVALID_VALUE),
            };
            if slot.replace(value).is_some() {
                return Err(CL_INVALID_VALUE);
            }
        }
        let narrow = |v: Option<cl_sampler_properties>, default: u32| -> CLResult<u32> {
            v.map_or(Ok(default), |v| {
                u32::try_from(v).map_err(|_| CL_INVALID_VALUE)
            })
        };
        let float = |v: Option<cl_sampler_properties>, default: f32| {
            v.map_or(default, |v| f32::from_bits(v as u32))
        };
        let mip = MipParams {
            filter: narrow(mip_filter, CL_FILTER_NEAREST)?,
            lod_min: float(lod_min, MipParams::DEFAULT.lod_min),
            lod_max: float(lod_max, MipParams::DEFAULT.lod_max),
        };
        Sampler::with_mip(
            context,
            narrow(normalized, CL_TRUE)?,
            narrow(addressing, CL_ADDRESS_CLAMP)?,
            narrow(filter, CL_FILTER_NEAREST)?,
            mip,
            raw,
        )
    }

    /// The sampler's pattern (`abi::sampler`).
    pub fn bits(&self) -> u32 {
        let mip = if self.mip_filter_mode == CL_FILTER_LINEAR {
            bits::MIP_FILTER_LINEAR
        } else {
            0
        };
        mip | bits::bits(
            self.normalized_coords,
            address_bits(self.addressing_mode).unwrap_or(bits::ADDRESS_NONE),
            filter_bits(self.filter_mode).unwrap_or(bits::FILTER_NEAREST),
        )
    }

    /// What kernels are given for this sampler (`abi::SamplerDescriptor`).
    pub fn descriptor(&self) -> SamplerDescriptor {
        SamplerDescriptor {
            bits: self.bits(),
            lod_min: self.lod_min,
            lod_max: self.lod_max,
            reserved: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::platform;

    fn context() -> Arc<Context> {
        Context::new(platform().devices.clone(), Vec::new())
    }

    #[test]
    fn creation_follows_the_context_and_checks_values() {
        let c = context();
        let made = Sampler::new(
            c.clone(),
            CL_TRUE,
            CL_ADDRESS_REPEAT,
            CL_FILTER_LINEAR,
            vec![],
        );
        if !crate::image::context_has_images(&c) {
            assert_eq!(made.err(), Some(CL_INVALID_OPERATION));
            return;
        }
        assert_eq!(made.unwrap().bits(), 0x27);
        assert_eq!(
            Sampler::new(c.clone(), 2, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            Sampler::new(c.clone(), CL_FALSE, 0x1234, CL_FILTER_LINEAR, vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
        let n = CL_SAMPLER_NORMALIZED_COORDS as cl_sampler_properties;
        let s = Sampler::with_properties(c.clone(), &[(n, 0)], vec![n, 0, 0]).unwrap();
        assert_eq!(s.bits(), 0x14, "unnormalised, clamp, nearest");
        assert_eq!(
            Sampler::with_properties(c.clone(), &[(n, 0), (n, 1)], vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            Sampler::with_properties(c.clone(), &[(0x1234, 0)], vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
        // Mip parameters: defaults, and given ones reaching the record exactly.
        let d = s.descriptor();
        assert_eq!((d.lod_min, d.lod_max), (0.0, f32::MAX));
        let (mf, lo, hi) = (
            CL_SAMPLER_MIP_FILTER_MODE as cl_sampler_properties,
            CL_SAMPLER_LOD_MIN as cl_sampler_properties,
            CL_SAMPLER_LOD_MAX as cl_sampler_properties,
        );
        let third = (1.0f32 / 3.0).to_bits() as cl_sampler_properties;
        let s = Sampler::with_properties(
            c.clone(),
            &[
                (mf, CL_FILTER_LINEAR as _),
                (lo, third),
                (hi, 2.5f32.to_bits() as _),
            ],
            vec![],
        )
        .unwrap();
        let d = s.descriptor();
        assert_eq!(
            d.bits,
            0x41 | 4 | 0x10,
            "mip linear, normalised, clamp, nearest"
        );
        assert_eq!((d.lod_min, d.lod_max), (1.0 / 3.0, 2.5));
        assert_eq!(
            Sampler::with_properties(c.clone(), &[(mf, 0x1234)], vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            Sampler::with_properties(c, &[(lo, f32::NAN.to_bits() as _)], vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
    }
}
