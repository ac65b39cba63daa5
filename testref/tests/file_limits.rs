//! The size limit of source files (issue #38): no Rust file the repository tracks may be over
//! 1,500 lines, so that each stays one area a reader can hold. Files are those `git ls-files`
//! lists at the workspace root; outside a git checkout (a source tarball, the Debian package
//! build) there is no list to check and the test says so and passes.

use std::path::Path;
use std::process::Command;

const LIMIT: usize = 1_500;

#[test]
fn no_tracked_rust_file_is_over_the_line_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root above testref/");
    let listed = match Command::new("git")
        .args(["ls-files", "-z", "--", "*.rs"])
        .current_dir(root)
        .output()
    {
        Ok(out) if out.status.success() => out.stdout,
        Ok(out) => {
            println!(
                "skipped: {} is not a git checkout ({})",
                root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return;
        }
        Err(e) => {
            println!("skipped: git cannot run ({e})");
            return;
        }
    };
    let files: Vec<&str> = listed
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| std::str::from_utf8(name).expect("a UTF-8 path"))
        .collect();
    if !files.contains(&"testref/src/lib.rs") {
        // Inside another repository's work tree (a package unpacked there), untracked.
        println!(
            "skipped: git at {} does not track Ferrocl's files",
            root.display()
        );
        return;
    }
    let mut over: Vec<(usize, &str)> = files
        .iter()
        .filter_map(|&name| {
            // A tracked file deleted in the work tree (mid-edit) has no lines to count.
            let text = std::fs::read(root.join(name)).ok()?;
            let lines = text.iter().filter(|&&b| b == b'\n').count()
                + usize::from(text.last().is_some_and(|&b| b != b'\n'));
            (lines > LIMIT).then_some((lines, name))
        })
        .collect();
    over.sort_unstable_by(|a, b| b.cmp(a));
    assert!(
        over.is_empty(),
        "{} tracked .rs file(s) over {LIMIT} lines (split them by area):\n{}",
        over.len(),
        over.iter()
            .map(|(lines, name)| format!("  {lines:>6}  {name}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
