//! `OpExtInst OpenCL.std printf` (env spec 2.11, OpenCL C 6.15.14): resolves the format and the
//! `%s` arguments to compile-time constant strings, parses the conversions and matches them with
//! the operand types. The result, [`PrintfFormat`], holds no SPIR-V ids: codegen stores argument
//! bytes as it describes and the runtime formats the records with it.
//!
//! Undefined forms (env 2.11: `*` widths, `ll`/`j`/`L`, `n`, `l` with `c` or `s`, a
//! non-literal `%s`, missing arguments, arguments of the wrong kind) are refused at build time,
//! so a kernel never prints through a guessed C type. An integer argument of another width than
//! the conversion's is converted to it, as C's promotions would. The `z` (`size_t`) and `t`
//! (`ptrdiff_t`) length modifiers of OpenCL 3.1 (env 3.1 §2.11, OpenCL C 3.1 §6.15.14.2) take
//! a scalar integer, 64 bits wide in the Physical64 modules the driver runs.

use rspirv::dr::{Function, Instruction, Operand};
use spirv::{Op, StorageClass, Word};

use crate::module::{Module, Type};

/// One `printf` format: literal text and conversions, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfFormat {
    pub pieces: Vec<PrintfPiece>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintfPiece {
    /// Bytes printed as they are (`%%` already turned into `%`).
    Text(Vec<u8>),
    Conversion(PrintfConversion),
}

/// One conversion applied to a scalar or to each element of a vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfConversion {
    /// The C `printf` directive for one element, with the C length modifier of the C type
    /// `arg` is passed as and no vector part: `%-8.3f`, `%#hhx`, `%ld`, `%c`, `%s`.
    pub directive: String,
    pub arg: PrintfArg,
    /// Elements (1 for a scalar); a vector's are printed separated by commas.
    pub count: u32,
}

/// How one element is stored in a printf record and passed to C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintfArg {
    /// An integer of `bytes` bytes, sign-extended when `signed`, passed as `long` when `long`,
    /// else as `int`.
    Int {
        bytes: u32,
        signed: bool,
        long: bool,
    },
    /// A float or double of `bytes` bytes (a half as the float of its value), passed as
    /// `double` (float → double is exact).
    Float { bytes: u32 },
    /// An address (8 bytes), passed as `void *`.
    Pointer,
    /// A literal string argument of `%s`: known at build time, nothing in the record.
    Str(Vec<u8>),
}

impl PrintfArg {
    /// Record bytes of one element.
    pub fn bytes(&self) -> u32 {
        match self {
            PrintfArg::Int { bytes, .. } | PrintfArg::Float { bytes } => *bytes,
            PrintfArg::Pointer => 8,
            PrintfArg::Str(_) => 0,
        }
    }
}

impl PrintfFormat {
    /// Bytes of argument data one record of this format carries.
    pub fn args_bytes(&self) -> u32 {
        self.conversions().map(|c| c.arg.bytes() * c.count).sum()
    }

    pub fn conversions(&self) -> impl Iterator<Item = &PrintfConversion> {
        self.pieces.iter().filter_map(|p| match p {
            PrintfPiece::Conversion(c) => Some(c),
            PrintfPiece::Text(_) => None,
        })
    }
}

/// A printf call: its format and, for each conversion that stores bytes in the record (in
/// format order), the id of the operand it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfCall {
    pub format: PrintfFormat,
    pub stored_operands: Vec<Word>,
}

/// Resolves and checks the `OpExtInst … printf` instruction `inst` of function `f`.
/// The error text is the rule broken, without the instruction (the caller names it).
pub fn printf_call(
    m: &Module,
    f: crate::view::Function<'_>,
    inst: crate::view::Inst<'_>,
) -> Result<PrintfCall, String> {
    resolve_printf_call(m, f.raw(), inst.raw())
}

/// [`printf_call`] on rspirv's representation, for the validator.
pub(crate) fn resolve_printf_call(
    m: &Module,
    f: &Function,
    inst: &Instruction,
) -> Result<PrintfCall, String> {
    let ids: Vec<Word> = inst.operands[2.min(inst.operands.len())..]
        .iter()
        .map(|o| match o {
            Operand::IdRef(id) => Ok(*id),
            _ => Err("OpenCL.std printf: every operand must be an <id>".to_owned()),
        })
        .collect::<Result<_, _>>()?;
    let (&format_id, args) = ids
        .split_first()
        .ok_or("OpenCL.std printf: the format operand is missing")?;
    let format = constant_string(m, f, format_id).ok_or_else(|| {
        format!("env 2.11: the printf format %{format_id} is not a pointer to a compile-time constant, NUL-terminated char array in UniformConstant storage")
    })?;
    let mut pieces = Vec::new();
    let mut stored_operands = Vec::new();
    let mut next_arg = args.iter();
    let mut text = Vec::new();
    let mut rest = &format[..];
    while let Some((&c, tail)) = rest.split_first() {
        rest = tail;
        if c != b'%' {
            text.push(c);
            continue;
        }
        let spec = parse_spec(&mut rest)?;
        if spec.conversion == b'%' {
            if spec.directive != "%" || spec.vector.is_some() || !spec.length.is_empty() {
                return Err(
                    "OpenCL.std printf: '%%' takes no flags, width, precision or modifiers".into(),
                );
            }
            text.push(b'%');
            continue;
        }
        let &arg = next_arg.next().ok_or_else(|| {
            format!(
                "OpenCL.std printf: the format has more conversions than arguments (at '%{}')",
                spec.text
            )
        })?;
        let conversion = match_argument(m, f, &spec, arg)?;
        if !text.is_empty() {
            pieces.push(PrintfPiece::Text(std::mem::take(&mut text)));
        }
        if conversion.arg.bytes() > 0 {
            stored_operands.push(arg);
        }
        pieces.push(PrintfPiece::Conversion(conversion));
    }
    if !text.is_empty() {
        pieces.push(PrintfPiece::Text(text));
    }
    Ok(PrintfCall {
        format: PrintfFormat { pieces },
        stored_operands,
    })
}

/// One parsed `%…` directive.
struct Spec {
    /// `%` + flags, width and precision, ready for C.
    directive: String,
    vector: Option<u32>,
    length: String,
    conversion: u8,
    /// The directive as written, after `%` (for messages).
    text: String,
}

/// Parses `[flags][width][.precision][vn][length]conversion` after a `%`, advancing `rest`.
fn parse_spec(rest: &mut &[u8]) -> Result<Spec, String> {
    let start = *rest;
    let take_while = |rest: &mut &[u8], pred: fn(u8) -> bool| -> String {
        let n = rest.iter().take_while(|&&c| pred(c)).count();
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        *rest = &rest[n..];
        s
    };
    let mut directive = String::from("%");
    directive += &take_while(rest, |c| b"-+ #0".contains(&c));
    let width = take_while(rest, |c| c.is_ascii_digit());
    let has_precision = rest.first() == Some(&b'.');
    let mut precision = String::new();
    if has_precision {
        *rest = &rest[1..];
        precision = take_while(rest, |c| c.is_ascii_digit());
    }
    // C99's environmental limit (7.19.6.1): a conversion need not produce more than 4095
    // characters; larger widths and precisions are refused rather than formatted into
    // arbitrarily large host allocations.
    let limit = |digits: &str| {
        digits
            .parse::<u64>()
            .map_or(!digits.is_empty(), |v| v > 4095)
    };
    if limit(&width) || limit(&precision) {
        return Err("OpenCL.std printf: field widths and precisions above 4095 (C99's limit for one conversion) are not supported".into());
    }
    directive += &width;
    if has_precision {
        directive.push('.');
        directive += &precision;
    }
    if rest.first() == Some(&b'*') {
        return Err("env 2.11: the '*' field width or precision is undefined in printf".into());
    }
    let mut vector = None;
    if rest.first() == Some(&b'v') {
        *rest = &rest[1..];
        let n = take_while(rest, |c| c.is_ascii_digit());
        match n.parse::<u32>() {
            Ok(n @ (2 | 3 | 4 | 8 | 16)) => vector = Some(n),
            _ => {
                return Err(format!(
                    "OpenCL.std printf: 'v{n}' is not a vector specifier (v2, v3, v4, v8, v16)"
                ))
            }
        }
    }
    let length = take_while(rest, |c| b"hlLjzt".contains(&c));
    let Some((&conversion, tail)) = rest.split_first() else {
        return Err("OpenCL.std printf: the format ends inside a conversion".into());
    };
    *rest = tail;
    let text = String::from_utf8_lossy(&start[..start.len() - rest.len()]).into_owned();
    if !matches!(length.as_str(), "" | "hh" | "h" | "hl" | "l" | "z" | "t") {
        return Err(format!(
            "env 2.11: the length modifier '{length}' is undefined in printf (at '%{text}')"
        ));
    }
    // `z` and `t` (OpenCL 3.1): scalar integer conversions only.
    if matches!(length.as_str(), "z" | "t")
        && (vector.is_some() || !b"diouxX".contains(&conversion))
    {
        return Err(format!(
            "env 2.11: the length modifier '{length}' takes a scalar integer conversion \
             (d, i, o, u, x, X) in printf (at '%{text}')"
        ));
    }
    if conversion == b'n' {
        return Err("env 2.11: the 'n' conversion is undefined in printf".into());
    }
    if !b"diouxXfFeEgGaAcsp%".contains(&conversion) {
        return Err(format!(
            "OpenCL.std printf: '{}' is not a supported conversion (at '%{text}')",
            conversion.escape_ascii()
        ));
    }
    Ok(Spec {
        directive,
        vector,
        length,
        conversion,
        text,
    })
}

/// The conversion `spec` applied to operand `arg`, or why they do not fit.
fn match_argument(
    m: &Module,
    f: &Function,
    spec: &Spec,
    arg: Word,
) -> Result<PrintfConversion, String> {
    let ty = m.type_of(arg).and_then(|t| m.ty(t));
    let (elem, count) = match ty {
        Some(Type::Vector { elem, count }) => (m.ty(*elem), *count),
        other => (other, 1),
    };
    let mismatch = |what: &str| {
        format!(
            "OpenCL.std printf: '%{}' needs {what}, but argument %{arg} is not one",
            spec.text
        )
    };
    if spec.vector.is_some_and(|n| n != count) || (spec.vector.is_none() && count != 1) {
        let what = match spec.vector {
            Some(n) => format!("a vector of {n} elements"),
            None => "a scalar".to_owned(),
        };
        return Err(mismatch(&what));
    }
    if spec.length == "hl" && spec.vector.is_none() {
        return Err(format!(
            "OpenCL.std printf: the 'hl' length modifier needs a vector specifier (at '%{}')",
            spec.text
        ));
    }
    let mut directive = spec.directive.clone();
    let arg = match spec.conversion {
        b'd' | b'i' | b'o' | b'u' | b'x' | b'X' => {
            let Some(Type::Int {
                width: width @ (8 | 16 | 32 | 64),
            }) = elem
            else {
                return Err(mismatch("an integer"));
            };
            // size_t and ptrdiff_t are passed as long, whose size and registers they have on
            // the LP64 hosts Ferrocl runs on.
            let long = matches!(spec.length.as_str(), "l" | "z" | "t");
            directive += match spec.length.as_str() {
                "hh" | "h" | "l" | "z" | "t" => &spec.length,
                _ => "",
            };
            PrintfArg::Int {
                bytes: width / 8,
                signed: matches!(spec.conversion, b'd' | b'i'),
                long,
            }
        }
        b'c' => {
            let (
                Some(Type::Int {
                    width: width @ (8 | 16 | 32 | 64),
                }),
                None,
                "",
            ) = (elem, spec.vector, spec.length.as_str())
            else {
                return Err(mismatch("a scalar integer without length modifier"));
            };
            PrintfArg::Int {
                bytes: width / 8,
                signed: true,
                long: false,
            }
        }
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => match elem {
            Some(Type::Float {
                width: width @ (32 | 64),
            }) => PrintfArg::Float { bytes: width / 8 },
            // Half elements (vectors with the `h` modifier, `%v2hf`; a scalar half is promoted
            // to double by the caller) are recorded as the floats with their values: exact, and
            // the form codegen keeps halves in.
            Some(Type::Float { width: 16 }) => PrintfArg::Float { bytes: 4 },
            _ => return Err(mismatch("a floating-point value")),
        },
        b'p' => match (elem, spec.vector, spec.length.as_str()) {
            (Some(Type::Pointer { .. }), None, "") => PrintfArg::Pointer,
            _ => return Err(mismatch("a pointer without length modifier")),
        },
        b's' => {
            if spec.vector.is_some() || !spec.length.is_empty() {
                return Err(mismatch(
                    "a literal string without vector or length modifier",
                ));
            }
            PrintfArg::Str(
                constant_string(m, f, arg)
                    .ok_or_else(|| mismatch("a literal string (env 2.11)"))?,
            )
        }
        other => {
            return Err(format!(
                "OpenCL.std printf: '{}' is not a supported conversion",
                other.escape_ascii()
            ))
        }
    };
    directive.push(spec.conversion as char);
    Ok(PrintfConversion {
        directive,
        arg,
        count,
    })
}

/// The bytes (up to the NUL) of the constant string `ptr` points to: a char array initialising
/// a `UniformConstant` variable, addressed by constant access chains.
fn constant_string(m: &Module, f: &Function, ptr: Word) -> Option<Vec<u8>> {
    let (var, offset) = pointer_base(m, f, ptr, 16)?;
    let def = m.global_raw(var)?;
    if def.class.opcode != Op::Variable
        || def.operands.first() != Some(&Operand::StorageClass(StorageClass::UniformConstant))
    {
        return None;
    }
    let Some(Operand::IdRef(init)) = def.operands.get(1) else {
        return None;
    };
    let bytes = char_array(m, *init)?;
    let tail = bytes.get(usize::try_from(offset).ok()?..)?;
    let end = tail.iter().position(|&c| c == 0)?;
    Some(tail[..end].to_vec())
}

/// The elements of a constant array of 8-bit integers.
fn char_array(m: &Module, id: Word) -> Option<Vec<u8>> {
    let c = m.global_raw(id)?;
    let Some(Type::Array { elem, len }) = c.result_type.and_then(|t| m.ty(t)) else {
        return None;
    };
    if m.ty(*elem) != Some(&Type::Int { width: 8 }) {
        return None;
    }
    match c.class.opcode {
        Op::ConstantNull => Some(vec![0; usize::try_from(*len).ok()?]),
        Op::ConstantComposite => c
            .operands
            .iter()
            .map(|o| match o {
                Operand::IdRef(e) => constant_int(m, *e).map(|v| v as u8),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn constant_int(m: &Module, id: Word) -> Option<u64> {
    let c = m.global_raw(id)?;
    match (c.class.opcode, c.operands.first()) {
        (Op::Constant, Some(Operand::LiteralBit32(v))) => Some(u64::from(*v)),
        (Op::Constant, Some(Operand::LiteralBit64(v))) => Some(*v),
        (Op::ConstantNull, _) => Some(0),
        _ => None,
    }
}

/// The module-scope variable `ptr` points into and the constant byte offset, following
/// access chains with constant indices, bitcasts and copies inside `f`.
fn pointer_base(m: &Module, f: &Function, ptr: Word, depth: u32) -> Option<(Word, u64)> {
    if m.global_raw(ptr).is_some() {
        return Some((ptr, 0));
    }
    if depth == 0 {
        return None;
    }
    let inst = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .find(|i| i.result_id == Some(ptr))?;
    let id = |k: usize| match inst.operands.get(k) {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    };
    let base = id(0)?;
    let pointee = |p: Word| match m.type_of(p).and_then(|t| m.ty(t)) {
        Some(Type::Pointer { pointee, .. }) => Some(*pointee),
        _ => None,
    };
    let (first_index, with_element) = match inst.class.opcode {
        Op::Bitcast | Op::CopyObject => return pointer_base(m, f, base, depth - 1),
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain => (1, true),
        Op::AccessChain | Op::InBoundsAccessChain => (1, false),
        _ => return None,
    };
    let (var, mut offset) = pointer_base(m, f, base, depth - 1)?;
    let mut ty = pointee(base)?;
    let mut k = first_index;
    if with_element {
        offset += constant_int(m, id(k)?)?.checked_mul(m.size_of(ty)?)?;
        k += 1;
    }
    while k < inst.operands.len() {
        let Some(Type::Array { elem, .. }) = m.ty(ty) else {
            return None;
        };
        ty = *elem;
        offset = offset.checked_add(constant_int(m, id(k)?)?.checked_mul(m.size_of(ty)?)?)?;
        k += 1;
    }
    Some((var, offset))
}
