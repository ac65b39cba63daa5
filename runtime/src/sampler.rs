//! Sampler objects: how a kernel's sampled image reads address and filter, checked when the
//! sampler is created and handed to kernels as the 32-bit pattern codegen's `abi::sampler`
//! defines (the bits of OpenCL C's `CLK_*` constants).

use std::sync::Arc;

use ferrocl_codegen::sampler as bits;
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
    /// `CL_SAMPLER_PROPERTIES`: the list as given to clCreateSamplerWithProperties (with its
    /// terminator), empty otherwise.
    pub properties: Vec<cl_sampler_properties>,
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
        if !crate::image::context_has_images(&context) {
            return Err(CL_INVALID_OPERATION);
        }
        if normalized_coords > CL_TRUE
            || address_bits(addressing_mode).is_none()
            || filter_bits(filter_mode).is_none()
        {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Arc::new(Sampler {
            base: Base::new(Tag::Sampler),
            context,
            normalized_coords: normalized_coords == CL_TRUE,
            addressing_mode,
            filter_mode,
            properties,
        }))
    }

    /// `clCreateSamplerWithProperties`: `pairs` are the (name, value) pairs of the list, `raw`
    /// the list as given. Unnamed properties take their defaults (normalised coordinates,
    /// CL_ADDRESS_CLAMP, CL_FILTER_NEAREST); an unknown or repeated name is CL_INVALID_VALUE.
    pub fn with_properties(
        context: Arc<Context>,
        pairs: &[(cl_sampler_properties, cl_sampler_properties)],
        raw: Vec<cl_sampler_properties>,
    ) -> CLResult<Arc<Sampler>> {
        let mut normalized = None;
        let mut addressing = None;
        let mut filter = None;
        for &(name, value) in pairs {
            let slot = match name as u32 {
                CL_SAMPLER_NORMALIZED_COORDS => &mut normalized,
                CL_SAMPLER_ADDRESSING_MODE => &mut addressing,
                CL_SAMPLER_FILTER_MODE => &mut filter,
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
        Sampler::new(
            context,
            narrow(normalized, CL_TRUE)?,
            narrow(addressing, CL_ADDRESS_CLAMP)?,
            narrow(filter, CL_FILTER_NEAREST)?,
            raw,
        )
    }

    /// What kernels are given for this sampler (`abi::sampler`).
    pub fn bits(&self) -> u32 {
        bits::bits(
            self.normalized_coords,
            address_bits(self.addressing_mode).unwrap_or(bits::ADDRESS_NONE),
            filter_bits(self.filter_mode).unwrap_or(bits::FILTER_NEAREST),
        )
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
            Sampler::with_properties(c, &[(0x1234, 0)], vec![]).err(),
            Some(CL_INVALID_VALUE)
        );
    }
}
