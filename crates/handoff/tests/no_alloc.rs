//! Publish, read, push, drain and taking mail allocate nothing after
//! construction.

use haptic_alloc_counter::{allocations_during, CountingAllocator};
use haptic_handoff::{mailbox, Latest, TickStream};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[derive(Clone, Copy)]
struct Pose {
    position: [f64; 3],
    orientation: [f64; 4],
}

#[test]
fn counter_sees_allocations() {
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(vec![0u8; 8]))),
        1
    );
}

#[test]
fn latest_allocates_nothing_after_construction() {
    let pose = Pose {
        position: [0.0; 3],
        orientation: [1.0, 0.0, 0.0, 0.0],
    };
    let (mut writer, mut reader) = Latest::new(&pose).split();
    let n = allocations_during(|| {
        for i in 0..1000 {
            let x = f64::from(i);
            writer.publish(Pose {
                position: [x; 3],
                ..pose
            });
            writer.publish_with(|slot| slot.position = [x; 3]);
            let seen = reader.read();
            assert_eq!(
                (seen.position, seen.orientation),
                ([x; 3], pose.orientation)
            );
            assert!(reader.read_new().is_none());
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn latest_publish_from_reuses_heap_buffers() {
    let contacts: Vec<[f64; 6]> = Vec::with_capacity(128);
    let (mut writer, mut reader) = Latest::new(&contacts).split();
    let mut model = contacts;
    // Each slot's capacity reaches 128 with its first clone_from.
    model.resize(128, [0.0; 6]);
    for _ in 0..3 {
        writer.publish_from(&model);
        reader.read();
    }
    let n = allocations_during(|| {
        for i in 0..1000 {
            model.clear();
            model.resize(i % 128, [f64::from(i as u32); 6]);
            writer.publish_from(&model);
            assert_eq!(reader.read().len(), i % 128);
        }
    });
    assert_eq!(n, 0);
}

#[test]
fn tick_stream_allocates_nothing_after_construction() {
    let (mut tx, mut rx) = TickStream::new(64).split();
    let n = allocations_during(|| {
        let mut sum = 0u64;
        for i in 0..1000u64 {
            tx.push([i; 8]);
            if i % 100 == 0 {
                sum += rx.drain().map(|r| r[0]).sum::<u64>();
            }
        }
        assert!(tx.dropped() > 0);
        assert!(sum > 0);
    });
    assert_eq!(n, 0);
}

#[test]
fn taking_mail_allocates_nothing() {
    let (mut sender, mut receiver) = mailbox::<Vec<u64>>();
    for round in 0..100u64 {
        assert!(sender.send(Box::new(vec![round; 16])).is_ok());
        assert!(sender.send(Box::new(Vec::new())).is_err());
        let n = allocations_during(|| {
            let taken = receiver.take_with(|value| {
                value[0] += 1;
                value.len()
            });
            assert_eq!(taken, Some(16));
            assert_eq!(receiver.take_with(|_| ()), None);
        });
        assert_eq!(n, 0);
        let back = sender.collect().expect("handed back");
        assert_eq!(back[0], round + 1);
        assert!(!sender.in_flight());
    }
}
