//! Cost of one publish, read and push on the servo side.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use haptic_handoff::{Latest, TickStream};

fn latest(c: &mut Criterion) {
    let (mut writer, mut reader) = Latest::new(&[0.0f64; 13]).split();
    let mut x = 0.0;
    c.bench_function("latest/publish_with [f64; 13]", |b| {
        b.iter(|| {
            x += 1.0;
            writer.publish_with(|slot| slot.fill(black_box(x)));
        })
    });
    c.bench_function("latest/read (after a publish) [f64; 13]", |b| {
        b.iter(|| {
            writer.publish_with(|slot| slot[0] = 1.0);
            black_box(reader.read()[0])
        })
    });
    c.bench_function("latest/read (nothing new) [f64; 13]", |b| {
        b.iter(|| black_box(reader.read()[0]))
    });
}

fn tick_stream(c: &mut Criterion) {
    let (mut tx, mut rx) = TickStream::new(1024).split();
    let mut i = 0u64;
    c.bench_function("tick_stream/push [u64; 8] (drain every 512)", |b| {
        b.iter(|| {
            i += 1;
            black_box(tx.push([i; 8]));
            if i.is_multiple_of(512) {
                black_box(rx.drain().count());
            }
        })
    });
    c.bench_function("tick_stream/push [u64; 8] (full, dropped)", |b| {
        b.iter(|| black_box(tx.push([i; 8])))
    });
}

criterion_group!(benches, latest, tick_stream);
criterion_main!(benches);
