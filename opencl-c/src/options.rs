//! The build-option string of `clBuildProgram`/`clCompileProgram` (and of `ferrocl-clc`), parsed
//! once into a typed [`BuildRequest`]: the one place that knows every option. The runtime reads
//! the request for codegen (math flags, `-cl-opt-disable`, `-cl-uniform-work-group-size`, …)
//! and refuses what it lists as unknown; the OpenCL C recipe derives clang's arguments from it
//! ([`BuildRequest::clang_args`]); the program cache keys OpenCL C builds on
//! [`BuildRequest::normalised`].

/// Splits a build option string into words as a shell would: on whitespace outside double
/// quotes, the quotes removed (`-DNAME="a b"` is the one word `-DNAME=a b`, `-I"dir x"` is
/// `-Idir x`). The one tokeniser of build (and link) options.
pub fn split_build_options(options: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quotes = false;
    let mut has = false;
    for c in options.chars() {
        match c {
            '"' => {
                in_quotes = !in_quotes;
                has = true;
            }
            c if c.is_whitespace() && !in_quotes => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            c => {
                cur.push(c);
                has = true;
            }
        }
    }
    if has {
        out.push(cur);
    }
    out
}

/// Build options that are not OpenCL's but that clang takes and that change nothing the rest
/// of Ferrocl must know: warning controls (`-w`, `-Wall`, `-Werror`, `-Wno-unused-variable`,
/// `-Werror=…`; not the `-Wl,`/`-Wa,`/`-Wp,` forwarding options) and the inline dialect
/// (`-fgnu89-inline`, `-fno-gnu89-inline`). They reach clang for OpenCL C and mean nothing for
/// IL.
fn is_clang_only(word: &str) -> bool {
    word == "-w"
        || (word.starts_with("-W")
            && word.len() > 2
            && !["-Wl,", "-Wa,", "-Wp,"].iter().any(|p| word.starts_with(p)))
        || word == "-fgnu89-inline"
        || word == "-fno-gnu89-inline"
}

/// A preprocessor option, in the order given (clang applies `-D` and `-U` in order, and
/// searches `-I` directories in order). `-D NAME` with a separate argument is `-DNAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preprocessor {
    /// `-DNAME` or `-DNAME=value`: the text after `-D`.
    Define(String),
    /// `-UNAME`.
    Undefine(String),
    /// `-Idir`.
    Include(String),
}

/// The math options, each as given (what one implies of another is the reader's business:
/// clang's and codegen's differ, see [`BuildRequest::clang_args`] and the runtime).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MathOptions {
    pub mad_enable: bool,
    pub no_signed_zeros: bool,
    pub finite_math_only: bool,
    pub unsafe_math_optimizations: bool,
    pub fast_relaxed_math: bool,
    pub single_precision_constant: bool,
    pub fp32_correctly_rounded_divide_sqrt: bool,
    /// `-cl-denorms-are-zero`: codegen flushes; clang-15 ignores it for spir64 (with a
    /// warning that `-Werror` would make fatal), so it never reaches clang.
    pub denorms_are_zero: bool,
}

/// A word of the option string the driver does not take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not an option Ferrocl or clang's passthrough set knows.
    Unknown(String),
    /// `-D`, `-I` or `-U` as the last word.
    MissingArgument(String),
}

impl Refused {
    /// The build-log line that names the refused word.
    pub fn log(&self) -> String {
        match self {
            Refused::Unknown(w) => format!("error: invalid build option \"{w}\"\n"),
            Refused::MissingArgument(w) => {
                format!("error: build option \"{w}\" needs an argument\n")
            }
        }
    }
}

/// A build-option string, parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildRequest {
    /// The `-cl-std=` value as written (`CL1.2`, `CL3.0`, …; the last one wins); `None`:
    /// OpenCL C 1.2. Which versions a device accepts is the runtime's business.
    pub cl_std: Option<String>,
    /// `-D`, `-U` and `-I`, in order.
    pub preprocessor: Vec<Preprocessor>,
    pub math: MathOptions,
    /// `-cl-kernel-arg-info`.
    pub kernel_arg_info: bool,
    /// `-cl-opt-disable`: no opt-15 passes on the module, an unoptimised codegen.
    pub opt_disable: bool,
    /// `-cl-uniform-work-group-size`.
    pub uniform_work_group_size: bool,
    /// `-cl-ferrocl-checked`: Ferrocl's checked mode for this program (as `FERROCL_CHECKED=on`
    /// does for all); clang keeps value names so that reports name variables.
    pub checked: bool,
    /// Options only clang reads ([`is_clang_only`]), in order.
    pub clang_only: Vec<String>,
    /// Accepted and ignored: `-g` (no debug information is produced), OpenCL 1.0's
    /// `-cl-strict-aliasing`, and `-cl-no-subgroup-ifp` (a promise that kernels need no
    /// independent forward progress between sub-groups; Ferrocl keeps it anyway, spin loops
    /// yield).
    pub ignored: Vec<String>,
    /// What the driver does not take, in order: the runtime fails the build with the first
    /// (CL_INVALID_BUILD_OPTIONS); clang never sees them.
    pub refused: Vec<Refused>,
}

impl BuildRequest {
    /// Parses an option string (split by [`split_build_options`]).
    pub fn parse(options: &str) -> BuildRequest {
        let words = split_build_options(options);
        let mut r = BuildRequest::default();
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            let m = &mut r.math;
            match w.as_str() {
                "-D" | "-I" | "-U" => match words.next() {
                    Some(v) => r.preprocessor.push(match w.as_str() {
                        "-D" => Preprocessor::Define(v),
                        "-I" => Preprocessor::Include(v),
                        _ => Preprocessor::Undefine(v),
                    }),
                    None => r.refused.push(Refused::MissingArgument(w)),
                },
                "-cl-mad-enable" => m.mad_enable = true,
                "-cl-no-signed-zeros" => m.no_signed_zeros = true,
                "-cl-finite-math-only" => m.finite_math_only = true,
                "-cl-unsafe-math-optimizations" => m.unsafe_math_optimizations = true,
                "-cl-fast-relaxed-math" => m.fast_relaxed_math = true,
                "-cl-single-precision-constant" => m.single_precision_constant = true,
                "-cl-fp32-correctly-rounded-divide-sqrt" => {
                    m.fp32_correctly_rounded_divide_sqrt = true
                }
                "-cl-denorms-are-zero" => m.denorms_are_zero = true,
                "-cl-kernel-arg-info" => r.kernel_arg_info = true,
                "-cl-opt-disable" => r.opt_disable = true,
                "-cl-uniform-work-group-size" => r.uniform_work_group_size = true,
                "-cl-ferrocl-checked" => r.checked = true,
                "-g" | "-cl-strict-aliasing" | "-cl-no-subgroup-ifp" => r.ignored.push(w),
                _ => {
                    if let Some(std) = w.strip_prefix("-cl-std=") {
                        r.cl_std = Some(std.to_owned());
                    } else if let Some(d) = w.strip_prefix("-D") {
                        r.preprocessor.push(Preprocessor::Define(d.to_owned()));
                    } else if let Some(d) = w.strip_prefix("-I") {
                        r.preprocessor.push(Preprocessor::Include(d.to_owned()));
                    } else if let Some(d) = w.strip_prefix("-U") {
                        r.preprocessor.push(Preprocessor::Undefine(d.to_owned()));
                    } else if is_clang_only(&w) {
                        r.clang_only.push(w);
                    } else {
                        r.refused.push(Refused::Unknown(w));
                    }
                }
            }
        }
        r
    }

    /// The OpenCL C version asked for: the `-cl-std=` value, `CL1.2` without one.
    pub fn language(&self) -> &str {
        self.cl_std.as_deref().unwrap_or("CL1.2")
    }

    /// The OpenCL C version clang compiles: [`Self::language`], but OpenCL C 3.1, which
    /// clang-15 does not know, as `CL3.0` (the recipe then gives the source 3.1's version
    /// macro: `OPENCL_C_3_1_PRELUDE`).
    pub fn clang_std(&self) -> &str {
        match self.language() {
            "CL3.1" => "CL3.0",
            language => language,
        }
    }

    /// The `-I` directories, in order.
    pub fn include_dirs(&self) -> impl Iterator<Item = &str> {
        self.preprocessor.iter().filter_map(|p| match p {
            Preprocessor::Include(dir) => Some(dir.as_str()),
            _ => None,
        })
    }

    /// What clang gets of the request, besides `-cl-std=`: the preprocessor options, clang's
    /// own options, `-cl-kernel-arg-info` and the math options clang-15 knows
    /// (`__FAST_RELAXED_MATH__`, fast-math flags that opt-15 may use and llvm-spirv writes as
    /// `FPFastMathMode`).
    ///
    /// `-cl-fast-relaxed-math` and `-cl-unsafe-math-optimizations` let clang mark divisions
    /// `arcp`, and opt-15 then turns `x / 3.0f` into `x * 0x1.555556p-2f`: not correctly
    /// rounded. With `-cl-fp32-correctly-rounded-divide-sqrt` as well, clang gets the parts of
    /// those options that leave division alone (finite math, no signed zeros, mad) and the
    /// macro is defined explicitly.
    pub fn clang_args(&self) -> Vec<String> {
        let mut args: Vec<String> = self
            .preprocessor
            .iter()
            .map(|p| match p {
                Preprocessor::Define(d) => format!("-D{d}"),
                Preprocessor::Undefine(u) => format!("-U{u}"),
                Preprocessor::Include(i) => format!("-I{i}"),
            })
            .collect();
        args.extend(self.clang_only.iter().cloned());
        let m = &self.math;
        let keep_division = m.fp32_correctly_rounded_divide_sqrt;
        let flags = [
            (self.kernel_arg_info, "-cl-kernel-arg-info"),
            (
                m.fast_relaxed_math && !keep_division,
                "-cl-fast-relaxed-math",
            ),
            (
                m.unsafe_math_optimizations && !keep_division,
                "-cl-unsafe-math-optimizations",
            ),
            (
                m.finite_math_only || (m.fast_relaxed_math && keep_division),
                "-cl-finite-math-only",
            ),
            (
                m.no_signed_zeros
                    || (keep_division && (m.fast_relaxed_math || m.unsafe_math_optimizations)),
                "-cl-no-signed-zeros",
            ),
            (
                m.mad_enable
                    || (keep_division && (m.fast_relaxed_math || m.unsafe_math_optimizations)),
                "-cl-mad-enable",
            ),
            (
                m.fast_relaxed_math && keep_division,
                "-D__FAST_RELAXED_MATH__=1",
            ),
            (m.single_precision_constant, "-cl-single-precision-constant"),
            (keep_division, "-cl-fp32-correctly-rounded-divide-sqrt"),
            // Checked mode's reports name variables and arguments, so clang keeps value names
            // (llvm-spirv turns them into OpName).
            (self.checked, "-fno-discard-value-names"),
        ];
        args.extend(flags.iter().filter(|f| f.0).map(|f| f.1.to_owned()));
        args
    }

    /// The request as far as it changes what the recipe makes — the OpenCL C version,
    /// `-cl-opt-disable` and clang's arguments, one per line — so that options only the runtime
    /// reads (`-cl-uniform-work-group-size`, `-cl-denorms-are-zero`, …) and spelling
    /// differences (`-DX` and `-D X`) do not: the program cache's key.
    pub fn normalised(&self) -> String {
        let mut out = format!("-cl-std={}\n", self.language());
        if self.opt_disable {
            out.push_str("-cl-opt-disable\n");
        }
        for arg in self.clang_args() {
            out.push_str(&arg);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clang_args(options: &str) -> Vec<String> {
        BuildRequest::parse(options).clang_args()
    }

    #[test]
    fn normalised_options_keep_what_reaches_clang() {
        let n = |o: &str| BuildRequest::parse(o).normalised();
        assert_eq!(n("-D X=1 -I /inc"), n("-DX=1 -I/inc"));
        assert_eq!(
            n(""),
            n("-cl-uniform-work-group-size -cl-denorms-are-zero -g")
        );
        assert_eq!(n(""), n("-cl-std=CL1.2"));
        for differs in [
            "-DX",
            "-cl-std=CL3.0",
            "-cl-opt-disable",
            "-cl-mad-enable",
            "-w",
        ] {
            assert_ne!(n(""), n(differs), "{differs}");
        }
    }

    #[test]
    fn options_split_and_filter() {
        let r = BuildRequest::parse(
            "-D A=1 -DB=\"x y\" -I /inc -cl-std=CL3.0 -cl-mad-enable -w -cl-denorms-are-zero \
             -cl-uniform-work-group-size -UC -Wall -fgnu89-inline",
        );
        assert_eq!(
            r.clang_args(),
            [
                "-DA=1",
                "-DB=x y",
                "-I/inc",
                "-UC",
                "-w",
                "-Wall",
                "-fgnu89-inline",
                "-cl-mad-enable"
            ]
        );
        assert_eq!(r.clang_std(), "CL3.0");
        assert_eq!(r.include_dirs().collect::<Vec<_>>(), ["/inc"]);
        assert!(r.math.denorms_are_zero && r.uniform_work_group_size && !r.opt_disable);
        assert!(r.refused.is_empty());
        assert_eq!(BuildRequest::parse("").clang_std(), "CL1.2");
        // OpenCL C 3.1 is compiled by clang-15 as 3.0, but asked for (and cached) as 3.1.
        let v31 = BuildRequest::parse("-cl-std=CL3.1");
        assert_eq!((v31.language(), v31.clang_std()), ("CL3.1", "CL3.0"));
        assert_ne!(
            v31.normalised(),
            BuildRequest::parse("-cl-std=CL3.0").normalised()
        );
        assert!(BuildRequest::parse("-cl-opt-disable").opt_disable);
    }

    #[test]
    fn unknown_and_incomplete_options_are_refused_in_order() {
        let r = BuildRequest::parse("-cl-bogus -g -Wl,-x -cl-strict-aliasing -I");
        assert_eq!(
            r.refused,
            [
                Refused::Unknown("-cl-bogus".into()),
                Refused::Unknown("-Wl,-x".into()),
                Refused::MissingArgument("-I".into())
            ]
        );
        assert_eq!(r.ignored, ["-g", "-cl-strict-aliasing"]);
        assert!(r.clang_args().is_empty());
        assert_eq!(
            r.refused[0].log(),
            "error: invalid build option \"-cl-bogus\"\n"
        );
    }

    #[test]
    fn math_options_reach_clang() {
        for o in [
            "-cl-fast-relaxed-math",
            "-cl-unsafe-math-optimizations",
            "-cl-finite-math-only",
            "-cl-no-signed-zeros",
            "-cl-mad-enable",
            "-cl-single-precision-constant",
            "-cl-fp32-correctly-rounded-divide-sqrt",
        ] {
            assert_eq!(clang_args(o), [o], "{o}");
        }
        // With correctly rounded division requested, the fast-math options lose only the
        // reciprocal and reassociation licences.
        assert_eq!(
            clang_args("-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt"),
            [
                "-cl-finite-math-only",
                "-cl-no-signed-zeros",
                "-cl-mad-enable",
                "-D__FAST_RELAXED_MATH__=1",
                "-cl-fp32-correctly-rounded-divide-sqrt"
            ]
        );
        assert_eq!(
            clang_args("-cl-fp32-correctly-rounded-divide-sqrt -cl-unsafe-math-optimizations"),
            [
                "-cl-no-signed-zeros",
                "-cl-mad-enable",
                "-cl-fp32-correctly-rounded-divide-sqrt"
            ]
        );
        assert_eq!(
            clang_args("-cl-ferrocl-checked -cl-kernel-arg-info"),
            ["-cl-kernel-arg-info", "-fno-discard-value-names"]
        );
    }
}
