//! The compile pipeline's last step behind one seam: a translated (and vectorised, checked …)
//! CLIF function becomes machine code, or a backend refuses it with a reason. Cranelift is the
//! first backend and the fallback of every refusal; the wide backend lowers the same CLIF,
//! wide vector types included, through LLVM's code generator in the LLVM server
//! (`llvm_ir` writes the LLVM IR, the server compiles it to an object, `object` links it).

pub(crate) mod llvm_ir;
