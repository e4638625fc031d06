//! Two-thread stress tests: values are never torn, sequences never go back,
//! and every pushed record is either received or counted as dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use haptic_handoff::{Latest, TickStream};

const FRESH_READS: u64 = 200_000;
const PUBLISHES: u64 = 100_000;
const RECORDS: u64 = 200_000;

fn assert_whole(v: &[u64; 8]) -> u64 {
    assert!(v.iter().all(|&x| x == v[0]), "torn value {v:?}");
    v[0]
}

#[test]
fn latest_values_are_whole_and_non_decreasing() {
    let (mut writer, mut reader) = Latest::new(&[0u64; 8]).split();
    let stop = Arc::new(AtomicBool::new(false));
    let producer = thread::spawn({
        let stop = Arc::clone(&stop);
        move || {
            let mut seq = 0;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                writer.publish_with(|slot| slot.fill(seq));
            }
            seq
        }
    });
    let mut last = 0;
    let mut fresh = 0u64;
    let mut stale = 0u64;
    while fresh < FRESH_READS {
        let seq = match reader.read_new() {
            Some(v) => {
                fresh += 1;
                assert_whole(v)
            }
            None => {
                stale += 1;
                assert_whole(reader.read())
            }
        };
        assert!(seq >= last, "went back from {last} to {seq}");
        last = seq;
    }
    stop.store(true, Ordering::Relaxed);
    let published = producer.join().unwrap();
    assert_eq!(assert_whole(reader.read()), published);
    assert!(reader.read_new().is_none());
    println!("{published} published, {fresh} fresh reads, {stale} stale reads");
}

#[test]
fn latest_read_new_reports_each_publish_once() {
    let (mut writer, mut reader) = Latest::new(&0u32).split();
    assert!(reader.read_new().is_none());
    writer.publish(1);
    writer.publish(2);
    assert_eq!(reader.read_new(), Some(&2));
    assert!(reader.read_new().is_none());
    assert_eq!(*reader.read(), 2);
}

/// A contact model of variable size, as physics hands to the servo.
#[derive(Clone)]
struct ContactModel {
    seq: u64,
    planes: Vec<[u64; 4]>,
}

#[test]
fn latest_clone_from_keeps_heap_values_whole() {
    let initial = ContactModel {
        seq: 0,
        planes: Vec::with_capacity(64),
    };
    let (mut writer, mut reader) = Latest::new(&initial).split();
    let producer = thread::spawn(move || {
        let mut model = initial;
        for seq in 1..=PUBLISHES {
            model.seq = seq;
            model.planes.clear();
            model.planes.resize((seq % 64) as usize, [seq; 4]);
            writer.publish_from(&model);
        }
    });
    let mut last = 0;
    while last < PUBLISHES {
        let model = reader.read();
        assert!(model.seq >= last);
        assert_eq!(model.planes.len() as u64, model.seq % 64);
        assert!(model.planes.iter().all(|p| *p == [model.seq; 4]));
        last = model.seq;
    }
    producer.join().unwrap();
}

#[derive(Clone, Copy)]
struct TickRecord {
    seq: u64,
    fields: [u64; 7],
}

#[test]
fn tick_stream_drops_newest_when_full() {
    let (mut tx, mut rx) = TickStream::new(3).split();
    for i in 0..6u32 {
        assert_eq!(tx.push(i), i < 4);
    }
    assert_eq!(tx.dropped(), 2);
    assert_eq!(rx.dropped(), 2);
    assert_eq!(rx.drain().collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(tx.push(6));
    assert_eq!(rx.drain().collect::<Vec<_>>(), [6]);
    assert_eq!(rx.drain().len(), 0);
}

#[test]
fn tick_stream_accounts_for_every_record() {
    let (mut tx, mut rx) = TickStream::new(64).split();
    let producer = thread::spawn(move || {
        let mut queued = 0u64;
        for seq in 0..RECORDS {
            queued += u64::from(tx.push(TickRecord {
                seq,
                fields: [seq; 7],
            }));
            // Pace the producer so that the consumer keeps up between naps.
            for _ in 0..100 {
                std::hint::spin_loop();
            }
        }
        (queued, tx.dropped())
    });
    let mut received = 0u64;
    let mut next = 0u64;
    let mut batch = Vec::with_capacity(64);
    let mut batches = 0u64;
    let mut take_batch = |rx: &mut haptic_handoff::TickConsumer<TickRecord>| {
        batch.clear();
        batch.extend(rx.drain());
        for r in &batch {
            assert!(r.seq >= next, "record {} after {}", r.seq, next);
            assert!(r.fields.iter().all(|&f| f == r.seq), "torn record");
            next = r.seq + 1;
        }
        received += batch.len() as u64;
    };
    while !producer.is_finished() {
        take_batch(&mut rx);
        batches += 1;
        if batches.is_multiple_of(1024) {
            // Fall behind now and then so that the ring overflows.
            thread::sleep(Duration::from_millis(1));
        }
    }
    let (queued, dropped) = producer.join().unwrap();
    take_batch(&mut rx);
    assert!(dropped > 0, "the consumer never fell behind");
    assert_eq!(queued, received);
    assert!(received >= 64, "the consumer hardly ran");
    assert_eq!(received + dropped, RECORDS);
    assert_eq!(rx.dropped(), dropped);
    println!("received {received}, dropped {dropped}");
}

#[test]
fn every_mailed_value_is_taken_once_and_comes_back_whole() {
    const VALUES: u64 = 20_000;
    let (mut sender, mut receiver) = haptic_handoff::mailbox::<[u64; 8]>();
    let receiving = thread::spawn(move || {
        let mut taken = 0u64;
        while taken < VALUES {
            if let Some(value) = receiver.take_with(|value| {
                let seq = assert_whole(value);
                value.fill(seq + 1_000_000);
                seq
            }) {
                assert_eq!(value, taken);
                taken += 1;
            }
        }
    });
    let mut sent = 0u64;
    let mut refused = 0u64;
    while sent < VALUES {
        match sender.send(Box::new([sent; 8])) {
            Ok(()) => sent += 1,
            Err(value) => {
                assert!(sender.in_flight());
                refused += u64::from(assert_whole(&value) == sent);
            }
        }
        while sender.in_flight() {
            if let Some(back) = sender.collect() {
                assert_eq!(assert_whole(&back), sent - 1 + 1_000_000);
            } else {
                thread::yield_now();
            }
        }
    }
    receiving.join().unwrap();
    assert_eq!(refused, 0);
}
