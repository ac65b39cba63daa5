// A photo editor's layer blending, modelled on darktable's blendop.cl (whose optimised build
// failed): the obsolete modes keep the lower layer and unknown modes show the upper one. opt-15
// sends the obsolete modes' cases straight to the end of the switch, so LLVM's phi there names
// the switch's block once per such case (one entry per CFG edge); llvm-spirv-15 copied that
// into an OpPhi naming one parent four times, which SPIR-V refuses. Every operation is exact
// on the test's inputs (multiples of 1/8 in [0, 1]), so the host computes the same bits.

typedef enum blend_mode_t
{
  BLEND_DISABLED_OBSOLETE = 0x00,
  BLEND_NORMAL_OBSOLETE = 0x01,
  BLEND_LIGHTEN = 0x02,
  BLEND_DARKEN = 0x03,
  BLEND_MULTIPLY = 0x04,
  BLEND_AVERAGE = 0x05,
  BLEND_ADD = 0x06,
  BLEND_SUBTRACT = 0x07,
  BLEND_DIFFERENCE = 0x08,
  BLEND_SCREEN = 0x09,
  BLEND_INVERSE_OBSOLETE = 0x14,
  BLEND_UNBOUNDED_OBSOLETE = 0x15,
} blend_mode_t;

static float4 blend(const float4 a, const float4 b, const int mode)
{
  float4 o;
  switch(mode)
  {
    case BLEND_LIGHTEN: o = fmax(a, b); break;
    case BLEND_DARKEN: o = fmin(a, b); break;
    case BLEND_MULTIPLY: o = a * b; break;
    case BLEND_AVERAGE: o = (a + b) * 0.5f; break;
    case BLEND_ADD: o = a + b; break;
    case BLEND_SUBTRACT: o = fmax(b - a, 0.0f); break;
    case BLEND_DIFFERENCE: o = fabs(a - b); break;
    case BLEND_SCREEN: o = 1.0f - (1.0f - a) * (1.0f - b); break;
    case BLEND_DISABLED_OBSOLETE:
    case BLEND_NORMAL_OBSOLETE:
    case BLEND_INVERSE_OBSOLETE:
    case BLEND_UNBOUNDED_OBSOLETE: o = a; break;
    default: o = b; break;
  }
  return o;
}

// The same on one channel (masks are single floats): a scalar phi with the repeated parent.
static float blend_channel(const float a, const float b, const int mode)
{
  float o;
  switch(mode)
  {
    case BLEND_LIGHTEN: o = fmax(a, b); break;
    case BLEND_DARKEN: o = fmin(a, b); break;
    case BLEND_MULTIPLY: o = a * b; break;
    case BLEND_ADD: o = a + b; break;
    case BLEND_DISABLED_OBSOLETE:
    case BLEND_NORMAL_OBSOLETE:
    case BLEND_INVERSE_OBSOLETE:
    case BLEND_UNBOUNDED_OBSOLETE: o = a; break;
    default: o = b; break;
  }
  return o;
}

__kernel void blend_pixels(__global float4 *out, __global const float4 *lower,
                           __global const float4 *upper, __global const int *mode)
{
  const size_t i = get_global_id(0);
  out[i] = blend(lower[i], upper[i], mode[i]);
}

__kernel void blend_mask(__global float *out, __global const float *lower,
                         __global const float *upper, __global const int *mode)
{
  const size_t i = get_global_id(0);
  out[i] = blend_channel(lower[i], upper[i], mode[i]);
}
