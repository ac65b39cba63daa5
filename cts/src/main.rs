//! `ferrocl-cts math [--quick|--full] [--function NAME,…] …`: runs the math brute-force checker
//! through the OpenCL loader, prints the table and writes it to `cts/results/`.
//! `ferrocl-cts convert [--sampled N|--full] …`: the conversion checker (see convert.rs).

use ferrocl_cts::check::{self, Options, HEADER};
use ferrocl_cts::ulp::{Format, F16, F32, F64};
use ferrocl_cts::{cl, convert, funcs};
use std::io::Write;

const USAGE: &str = "usage: ferrocl-cts math [--quick | --full] [options]
       ferrocl-cts convert [--sampled N | --full] [options]   (see ferrocl-cts convert --help)

  --quick              special values + 2^20 random inputs per function and type (default)
  --full               all 2^32 inputs for unary float functions, 2^28 random for the others
                       (hours; run it on an idle machine)
  --function A,B       only these functions (repeatable); names as in the table, e.g. sin,
                       divide, native_exp, half_sqrt
  --type float|double|half
                       only this type (half: cl_khr_fp16 devices; unary functions see all
                       2^16 halves)
  --random N           random inputs per function (quick mode)
  --seed N             random seed (runs are reproducible)
  --no-vector          only the scalar kernel (by default float4/double4 too)
  --options OPTS       clBuildProgram options of every kernel; results are judged by what
                       their math options allow (-cl-unsafe-math-optimizations and
                       -cl-fast-relaxed-math: table 7 for float; -cl-finite-math-only: no
                       infinite or NaN arguments or results; -cl-no-signed-zeros;
                       -cl-denorms-are-zero: the flush-to-zero rules)
  --relaxed            add -cl-fast-relaxed-math (table 7 of the env spec, as the CTS's
                       relaxed mode judges it); the table goes to math-<mode>-relaxed.md
  --icd PATH           set OCL_ICD_VENDORS=PATH (a .icd file, a directory of them or the
                       driver .so) before loading the loader; otherwise the loader uses
                       OCL_ICD_VENDORS if set, else /etc/OpenCL/vendors
  --platform NAME      platform whose name contains NAME (default: ferrocl)
  --out PATH           where to write the table (default: cts/results/math-<mode>.md)
  --list               print the functions and bounds and exit";

const CONVERT_USAGE: &str = "usage: ferrocl-cts convert [--sampled N | --full] [options]

  every conversion from int, uint and float to char, uchar, short, ushort, int, uint, long,
  ulong, float and double, with the default rounding, _rte, _rtz, _rtp, _rtn and (integer
  destinations) _sat, through real kernels, against exact host references

  --sampled N          special values + N random inputs per source type (default 2^20)
  --full               all 2^32 inputs of each source type (hours; run it on an idle machine)
  --from A,B           only these source types (int, uint, float)
  --to A,B             only these destination types
  --seed N             random seed of sampled mode
  --chunk N            inputs per kernel launch (default 2^22)
  --icd PATH           set OCL_ICD_VENDORS=PATH before loading the loader
  --platform NAME      platform whose name contains NAME (default: ferrocl)";

extern "C" {
    fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
}

/// glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD.
const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
const M_TRIM_THRESHOLD: std::ffi::c_int = -1;

fn main() {
    // Every chunk allocates columns of a few MiB; served from mmap they are page-faulted in
    // anew each time, which cost a tenth of a full run. Keep them in the heap instead.
    // SAFETY: mallopt only changes allocator tuning; called before any other thread exists.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 1 << 30);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
    }
    let code = match run() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("ferrocl-cts: {e}");
            2
        }
    };
    std::process::exit(code);
}

fn run() -> Result<bool, String> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("math") => {}
        Some("convert") => return run_convert(args),
        Some("--help" | "-h") | None => {
            println!("{USAGE}");
            return Ok(true);
        }
        Some(other) => return Err(format!("unknown command {other:?}\n{USAGE}")),
    }
    let mut opts = Options::default();
    let mut names: Vec<String> = Vec::new();
    let mut platform = "ferrocl".to_string();
    let mut out: Option<String> = None;
    let mut relaxed = false;
    let value = |args: &mut dyn Iterator<Item = String>, flag: &str| {
        args.next().ok_or_else(|| format!("{flag} needs a value"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => opts.full = false,
            "--full" => opts.full = true,
            "--function" => names.extend(value(&mut args, &a)?.split(',').map(str::to_string)),
            "--type" => match value(&mut args, &a)?.as_str() {
                "float" => (opts.double, opts.half) = (false, false),
                "double" => (opts.float, opts.half) = (false, false),
                "half" => (opts.float, opts.double) = (false, false),
                t => return Err(format!("unknown type {t}")),
            },
            "--random" => {
                opts.random = value(&mut args, &a)?
                    .parse()
                    .map_err(|e| format!("--random: {e}"))?
            }
            "--seed" => {
                opts.seed = value(&mut args, &a)?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--no-vector" => opts.vector = false,
            "--options" => {
                let o = value(&mut args, &a)?;
                opts.build_options = format!("{} {o}", opts.build_options).trim().to_string();
            }
            "--relaxed" => {
                opts.build_options = format!("{} -cl-fast-relaxed-math", opts.build_options)
                    .trim()
                    .to_string();
                relaxed = true;
            }
            "--icd" => {
                let path = value(&mut args, &a)?;
                // Before the loader is opened, so it is the only ICD the loader sees.
                std::env::set_var(
                    "OCL_ICD_VENDORS",
                    std::fs::canonicalize(&path).map_err(|e| format!("{path}: {e}"))?,
                );
            }
            "--platform" => platform = value(&mut args, &a)?,
            "--out" => out = Some(value(&mut args, &a)?),
            "--list" => {
                for f in funcs::FUNCS {
                    let d = f.f64_bound.map_or("—".into(), funcs::bound_text);
                    let h = f.f16_bound.map_or("—".into(), funcs::bound_text);
                    println!(
                        "{:14} float {:12} double {:12} half {}",
                        f.name,
                        funcs::bound_text(f.f32_bound),
                        d,
                        h
                    );
                }
                return Ok(true);
            }
            _ => return Err(format!("unknown option {a:?}\n{USAGE}")),
        }
    }
    let selected: Vec<&'static funcs::Func> = if names.is_empty() {
        funcs::FUNCS.iter().collect()
    } else {
        names
            .iter()
            .map(|n| funcs::by_name(n).ok_or_else(|| format!("unknown function {n} (see --list)")))
            .collect::<Result<_, _>>()?
    };
    let dev = cl::Device::open(&platform)?;
    let mode = if opts.full { "full" } else { "quick" };
    let out = out.unwrap_or_else(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/results");
        let suffix = if relaxed { "-relaxed" } else { "" };
        if names.is_empty() {
            format!("{dir}/math-{mode}{suffix}.md")
        } else {
            format!("{dir}/math-{mode}-{}{suffix}.md", names.join("-"))
        }
    });
    let mut text = format!(
        "# ferrocl-cts math --{mode}\n\n\
         - command: `ferrocl-cts {}`\n\
         - finished: {} (UTC)\n\
         - platform: {}; device: {}; float denormals: {}; correctly rounded float divide and sqrt: {}\n\
         - build options: {}\n\
         - inputs: special values (all pairs / triples for 2 / 3 arguments), then {}\n\
         - reference: glibc long double (64-bit significand); float and half fma/mad/fdim exact\n\
         - kernels: scalar and {}; both are judged, `vec≠scalar` counts lanes that differ\n\n",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        "{finished}",
        dev.platform_name,
        dev.device_name,
        if dev.ftz_f32 {
            "flushed (CTS FTZ rules)"
        } else {
            "supported"
        },
        if dev.cr_divide_sqrt_f32 {
            "reported (divide and sqrt built with -cl-fp32-correctly-rounded-divide-sqrt and judged at 0.5 ulp, as the CTS's divide_cr and sqrt_cr)"
        } else {
            "not reported"
        },
        judged_by(&opts.build_options),
        if opts.full {
            "every float for unary float functions, 2^28 random for the others".to_string()
        } else {
            format!(
                "{} random inputs (seed {}); every half for unary half functions",
                opts.random, opts.seed
            )
        },
        if opts.vector {
            "4-wide vector"
        } else {
            "no vector"
        },
    );
    println!("{}", text.replace("{finished}", "…"));
    println!("{HEADER}");
    text.push_str(HEADER);
    text.push('\n');
    let mut all_ok = true;
    let started = std::time::Instant::now();
    let jobs: Vec<(&'static funcs::Func, Format)> = selected
        .iter()
        .flat_map(|&f| [F32, F64, F16].map(|fmt| (f, fmt)))
        .filter(|&(f, fmt)| {
            if fmt == F64 {
                opts.double && f.f64_bound.is_some() && dev.has_double
            } else if fmt == F16 {
                opts.half && f.f16_bound.is_some() && dev.has_half
            } else {
                opts.float
            }
        })
        .collect();
    // Functions that share a reference and all their inputs (sincos.cos, half_cos, native_cos
    // in a full run) are measured in one pass: the reference is most of a full run's time.
    let mut rows: Vec<Option<check::Row>> = vec![None; jobs.len()];
    let mut shared = false;
    for k in 0..jobs.len() {
        if rows[k].is_some() {
            continue;
        }
        let (f, fmt) = jobs[k];
        let together: Vec<usize> = (k..jobs.len())
            .filter(|&j| {
                rows[j].is_none()
                    && jobs[j].1 == fmt
                    && (j == k || check::shares_pass(f, jobs[j].0, fmt, &opts))
            })
            .collect();
        shared |= together.len() > 1;
        let funcs: Vec<_> = together.iter().map(|&j| jobs[j].0).collect();
        let measured = check::check_together(&dev, &funcs, fmt, &opts);
        assert_eq!(measured.len(), together.len(), "one row per function");
        // Printed as each pass ends; the table keeps the order of the selection.
        for (j, row) in together.into_iter().zip(measured) {
            all_ok &= row.ok();
            println!("{}", check::row_text(&row));
            let _ = std::io::stdout().flush();
            rows[j] = Some(row);
        }
    }
    for row in rows.into_iter().flatten() {
        text.push_str(&check::row_text(&row));
        text.push('\n');
    }
    if shared {
        text.push_str(
            "\nFunctions sharing a reference and every input were measured in one pass, the \
             reference evaluated once; each of their rows shows the whole pass's time.\n",
        );
    }
    text.push_str(&format!(
        "\nTotal time: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    ));
    let text = text.replace("{finished}", &utc_now());
    if let Some(dir) = std::path::Path::new(&out).parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&out, text).map_err(|e| format!("{out}: {e}"))?;
    println!("\nwritten to {out}");
    Ok(all_ok)
}

fn run_convert(mut args: impl Iterator<Item = String>) -> Result<bool, String> {
    let mut random: u64 = 1 << 20;
    let mut full = false;
    let mut sources: Vec<convert::Source> = convert::Source::ALL.to_vec();
    let mut dests: Vec<convert::Dest> = convert::DESTS.to_vec();
    let mut seed: u64 = 0x5EED;
    let mut chunk: usize = 1 << 22;
    let mut platform = "ferrocl".to_string();
    let number = |v: Option<String>, flag: &str| -> Result<u64, String> {
        v.ok_or_else(|| format!("{flag} needs a value"))?
            .parse()
            .map_err(|e| format!("{flag}: {e}"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sampled" => random = number(args.next(), &a)?,
            "--full" => full = true,
            "--seed" => seed = number(args.next(), &a)?,
            "--chunk" => chunk = number(args.next(), &a)?.clamp(1, 1 << 26) as usize,
            "--from" => {
                let v = args.next().ok_or("--from needs a value")?;
                sources = v
                    .split(',')
                    .map(|n| convert::Source::by_name(n).ok_or(format!("unknown source {n}")))
                    .collect::<Result<_, _>>()?;
            }
            "--to" => {
                let v = args.next().ok_or("--to needs a value")?;
                dests = v
                    .split(',')
                    .map(|n| convert::dest_by_name(n).ok_or(format!("unknown destination {n}")))
                    .collect::<Result<_, _>>()?;
            }
            "--icd" => {
                let path = args.next().ok_or("--icd needs a value")?;
                std::env::set_var(
                    "OCL_ICD_VENDORS",
                    std::fs::canonicalize(&path).map_err(|e| format!("{path}: {e}"))?,
                );
            }
            "--platform" => platform = args.next().ok_or("--platform needs a value")?,
            "--help" | "-h" => {
                println!("{CONVERT_USAGE}");
                return Ok(true);
            }
            _ => return Err(format!("unknown option {a:?}\n{CONVERT_USAGE}")),
        }
    }
    let dev = cl::Device::open(&platform)?;
    println!(
        "ferrocl-cts convert ({}) on {} / {}",
        if full {
            "all 2^32 inputs".to_string()
        } else {
            format!("special values + {random} random inputs, seed {seed}")
        },
        dev.platform_name,
        dev.device_name
    );
    let mut all_ok = true;
    let started = std::time::Instant::now();
    for &src in &sources {
        for &dest in &dests {
            if dest.name == "double" && !dev.has_double {
                println!("{:>5} -> {:<6} skipped: no fp64", src.name(), dest.name);
                continue;
            }
            let t = std::time::Instant::now();
            let mut inputs: Box<dyn Iterator<Item = Vec<u32>>> = if full {
                Box::new(convert::all_inputs(chunk))
            } else {
                Box::new(convert::sampled_inputs(src, random, seed, chunk))
            };
            let r = convert::check_pair(&dev, src, dest, &mut inputs, full.then_some(1 << 32))?;
            all_ok &= r.failures == 0;
            println!(
                "{:>5} -> {:<6} {:>3} variants, {:>10} inputs, {:>11} judged results, {} failures ({:.1} s)",
                src.name(),
                dest.name,
                convert::variants(dest).len(),
                r.inputs,
                r.judged,
                r.failures,
                t.elapsed().as_secs_f64()
            );
            for e in &r.examples {
                println!("        {e}");
            }
            let _ = std::io::stdout().flush();
        }
    }
    println!(
        "{} in {:.0} s",
        if all_ok { "PASS" } else { "FAIL" },
        started.elapsed().as_secs_f64()
    );
    Ok(all_ok)
}

/// The header line on the build options and how they change the judging.
fn judged_by(options: &str) -> String {
    let m = ferrocl_cts::relaxed::MathOptions::parse(options);
    let mut notes = Vec::new();
    if m.unsafe_math {
        notes.push(
            "float judged by table 7 of the env spec (`T7` bounds; derived formulas evaluated in float), \
             the flush-to-zero rules apply, 6.7 edge cases are not required",
        );
    }
    if m.finite_only {
        notes.push("results for infinite or NaN arguments or results are not judged");
    }
    if m.no_signed_zeros {
        notes.push("the sign of zero is not judged");
    }
    if m.denorms_are_zero {
        notes.push("float subnormals may be flushed");
    }
    if options.is_empty() {
        "none".into()
    } else if notes.is_empty() {
        format!("`{options}`")
    } else {
        format!("`{options}`: {}", notes.join("; "))
    }
}

/// Current UTC time as YYYY-MM-DD HH:MM (no date crate for one line).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}
