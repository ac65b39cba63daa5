//! printf records: the buffer filling up, and printing around a barrier.

use super::*;

/// A printf buffer as abi.rs lays it out: counter, capacity, then `capacity` record bytes.
fn printf_buffer(capacity: usize) -> Vec<u64> {
    let mut words = vec![0u64; (PRINTF_BUFFER_HEADER + capacity) / 8];
    words[1] = capacity as u64;
    words
}

fn record_bytes(words: &[u64]) -> Vec<u8> {
    words[PRINTF_BUFFER_HEADER / 8..]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

#[test]
fn printf_records_fill_the_buffer_then_fail() {
    both(|r| {
        let p = build("printf.cl", r);
        let k = p.kernel("records").expect("kernel");
        assert_eq!(k.printf_formats.len(), 1);
        let pieces = &k.printf_formats[0].pieces;
        let text = |t: &str| PrintfPiece::Text(t.as_bytes().to_vec());
        let conv = |directive: &str, arg: PrintfArg, count| {
            PrintfPiece::Conversion(PrintfConversion {
                directive: directive.into(),
                arg,
                count,
            })
        };
        let int = PrintfArg::Int {
            bytes: 4,
            signed: true,
            long: false,
        };
        assert_eq!(
            pieces,
            &[
                conv("%d", int.clone(), 1),
                text(" "),
                conv("%f", PrintfArg::Float { bytes: 4 }, 4),
                text(" "),
                conv("%s", PrintfArg::Str(b"str".to_vec()), 1),
                conv("%c", int, 1),
                text("\n"),
            ],
            "{r:?}"
        );
        // 8 header + int + 4 floats + char = 32 bytes a record: room for 5 of 8.
        let mut buffer = printf_buffer(5 * 32);
        let mut ret = vec![7i32; 8];
        let (mut args, _) = Args::new(&p, "records");
        args.ptr(&p, "records", 0, &mut ret);
        let address = buffer.as_mut_ptr() as u64;
        launch_printing(
            &p,
            "records",
            &args,
            1,
            [0; 3],
            [8, 1, 1],
            [4, 1, 1],
            address,
        );
        assert_eq!(ret, [0, 0, 0, 0, 0, -1, -1, -1], "{r:?}");
        assert_eq!(buffer[0], 8 * 32, "{r:?}: every call bumps the counter");
        let bytes = record_bytes(&buffer);
        for (i, rec) in bytes.chunks(32).enumerate() {
            let word = |k: usize| u32::from_le_bytes(rec[4 * k..4 * k + 4].try_into().unwrap());
            let float = |k: usize| f32::from_bits(word(k));
            assert_eq!(
                (word(0), word(1), word(2)),
                (32, 0, i as u32),
                "{r:?} record {i}"
            );
            assert_eq!(
                [float(3), float(4), float(5), float(6)],
                [i as f32, 0.5, -1.0, 2.0],
                "{r:?} record {i}"
            );
            assert_eq!(word(7), u32::from(b'z'), "{r:?} record {i}");
        }
    });
}

#[test]
fn printf_around_a_barrier() {
    both(|r| {
        let p = build("printf.cl", r);
        let k = p.kernel("around_barrier").expect("kernel");
        assert_eq!(k.printf_formats.len(), 2, "{r:?}");
        let mut buffer = printf_buffer(4096);
        let mut ret = vec![7i32; 6];
        let (mut args, _) = Args::new(&p, "around_barrier");
        args.ptr(&p, "around_barrier", 0, &mut ret);
        let address = buffer.as_mut_ptr() as u64;
        launch_printing(
            &p,
            "around_barrier",
            &args,
            1,
            [0; 3],
            [6, 1, 1],
            [3, 1, 1],
            address,
        );
        assert_eq!(ret, [0; 6], "{r:?}");
        // One group after the other: its "before" records, then its "after" records.
        let bytes = record_bytes(&buffer);
        let mut seen = Vec::new();
        let mut pos = 0;
        while pos < buffer[0] as usize {
            let word = |k: usize| u32::from_le_bytes(bytes[pos + 4 * k..][..4].try_into().unwrap());
            let (len, format) = (word(0) as usize, word(1));
            let value = if format == 0 {
                i64::from(word(2) as i32)
            } else {
                i64::from_le_bytes(bytes[pos + 8..][..8].try_into().unwrap())
            };
            seen.push((format, value));
            pos += len;
        }
        let want: Vec<(u32, i64)> = [0, 1]
            .iter()
            .flat_map(|g| {
                let items = 3 * g..3 * g + 3;
                items.clone().map(|i| (0, i)).chain(items.map(|i| (1, i)))
            })
            .collect();
        assert_eq!(seen, want, "{r:?}");
    });
}
