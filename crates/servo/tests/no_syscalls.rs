//! The running servo thread allocates nothing, takes no lock and makes no
//! syscall but its sleep, under contention on everything it shares.
//!
//! A real [`ServoThread`] presses a cube into `cube_corner` at 1 kHz for
//! 1.5 s while one thread publishes physics snapshots as fast as it can,
//! another drains telemetry, reads the tool state and queries the shared
//! distance field as fast as it can, and a third sends rendering parameter
//! updates (new friction models, pyramids and `μ`) one after another and
//! reads the scene frames; the main thread polls the handle.
//!
//! On the servo thread only (in `after_setup`: after its priority is set
//! and its buffers allocated, before its first sleep) a seccomp filter is
//! installed. Its program allows the servo's sleep — `clock_nanosleep` on
//! `CLOCK_MONOTONIC` to an absolute deadline — and turns every other
//! syscall, whatever its number, arguments or architecture, into a user
//! notification (so even a relative sleep such as `std::thread::sleep` is
//! reported). A supervisor thread receives each one, notes how many device
//! reads the servo had made (exact: the servo is blocked in that syscall
//! while the supervisor looks) and lets it continue. The device's reads
//! also sample the servo thread's own allocation count
//! ([`haptic_alloc_counter`] counts per thread).
//!
//! Why this proves the claim, from the first tick until the stop request:
//!
//! - **No syscall but the sleep**: the kernel runs the filter on entry to
//!   every syscall, whoever issues it (our code, std, glibc, a dependency,
//!   a clock read falling back from the vDSO); none was reported. The
//!   simulated device makes no I/O, so with a real device its reads and
//!   writes are the only additions.
//! - **No lock**: a mutex, condvar, `RwLock`, `Once` or channel that ever
//!   has to wait calls `futex`; there was none while the servo ran,
//!   although the other threads hammered the hand-off all along. (A spin
//!   lock would make no syscall; the hand-off has none by construction, see
//!   `haptic-handoff`.)
//! - **No allocation**: no `alloc` or `realloc` on the servo thread, not
//!   even one glibc could serve without a syscall.
//!
//! The filter is written for x86-64 (`AUDIT_ARCH_X86_64` and its syscall
//! numbers); elsewhere the test is ignored. It needs seccomp user
//! notification with `SECCOMP_USER_NOTIF_FLAG_CONTINUE` (Linux 5.5) and
//! fails naming the errno if the filter cannot be installed.
#![cfg(target_os = "linux")]

mod common;

use common::{press_into_corner, rig_with_geometry};
use haptic_alloc_counter::{allocations, CountingAllocator};
use haptic_contact::{EnvironmentGeometry, EnvironmentObject, SharedField};
use haptic_devices::{
    DeviceCapabilities, DeviceError, DeviceSample, HapticDevice, SimulatedClock, SimulatedDevice,
    Wrench,
};
use haptic_render::{FrictionModel, RenderParameters, RenderingUpdate};
use haptic_servo::{
    LocalBodyModel, NodePatch, ParameterUpdate, ServoConfig, ServoThread, NO_ENTRY,
};
use haptic_testkit::fields::SphereField;
use nalgebra::{Isometry3, Matrix3, Matrix6, Point3, Vector3, Vector6};
use std::collections::BTreeMap;
use std::mem::offset_of;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// `AUDIT_ARCH_X86_64` of `<linux/audit.h>`: `EM_X86_64` (62), 64-bit,
/// little-endian.
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;

/// The listener fd is not published yet.
const PENDING: i32 = -1;

/// What the servo thread has done, as its device sees it.
struct Probe {
    /// Device reads, one at the start of every tick.
    reads: AtomicU64,
    /// The servo thread's allocation count at its first and latest read.
    allocations_first: AtomicUsize,
    allocations_last: AtomicUsize,
}

/// A [`SimulatedDevice`] that updates the [`Probe`] on every read.
struct Probed {
    device: SimulatedDevice,
    probe: Arc<Probe>,
}

impl HapticDevice for Probed {
    fn capabilities(&self) -> &DeviceCapabilities {
        self.device.capabilities()
    }

    fn read(&mut self) -> Result<DeviceSample, DeviceError> {
        let allocated = allocations();
        let reads = self.probe.reads.load(Ordering::Relaxed);
        if reads == 0 {
            self.probe
                .allocations_first
                .store(allocated, Ordering::Relaxed);
        }
        self.probe
            .allocations_last
            .store(allocated, Ordering::Relaxed);
        self.probe.reads.store(reads + 1, Ordering::SeqCst);
        self.device.read()
    }

    fn write(&mut self, wrench: &Wrench) -> Result<(), DeviceError> {
        self.device.write(wrench)
    }
}

fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump_if_equal(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Installs the filter on the calling thread; its listener fd, or
/// `−1 − errno` (below [`PENDING`]) on failure. Allocates nothing.
fn install_filter() -> i32 {
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    // Argument `i`'s low 32 bits (x86-64 is little-endian); both checked
    // arguments are C ints.
    let argument = |i: usize| (offset_of!(libc::seccomp_data, args) + 8 * i) as u32;
    // Each failed check jumps to the last instruction: notify.
    let program = [
        statement(load, offset_of!(libc::seccomp_data, arch) as u32),
        jump_if_equal(AUDIT_ARCH_X86_64, 0, 7),
        statement(load, offset_of!(libc::seccomp_data, nr) as u32),
        jump_if_equal(libc::SYS_clock_nanosleep as u32, 0, 5),
        statement(load, argument(0)),
        jump_if_equal(libc::CLOCK_MONOTONIC as u32, 0, 3),
        statement(load, argument(1)),
        jump_if_equal(libc::TIMER_ABSTIME as u32, 0, 1),
        statement(ret, libc::SECCOMP_RET_ALLOW),
        statement(ret, libc::SECCOMP_RET_USER_NOTIF),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: plain syscalls; `fprog` and the program it points to outlive
    // the call, which copies them.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return -errno() - 1;
        }
        let fd = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &fprog as *const libc::sock_fprog,
        );
        if fd < 0 {
            -errno() - 1
        } else {
            fd as i32
        }
    }
}

/// A syscall the filter reported.
#[derive(Clone, Copy, Debug)]
struct Trap {
    nr: i32,
    arch: u32,
    /// Device reads the servo had made when it trapped.
    reads: u64,
}

/// Answers the filter's notifications, letting each syscall continue,
/// until the filter has no thread left (or `done`, after the servo thread
/// was joined).
fn supervise(listener: &AtomicI32, probe: &Probe, done: &AtomicBool) -> Result<Vec<Trap>, String> {
    let fd = loop {
        match listener.load(Ordering::SeqCst) {
            PENDING if done.load(Ordering::SeqCst) => {
                return Err("the servo thread never ran its start-up hook".into())
            }
            PENDING => thread::sleep(Duration::from_millis(1)),
            fd if fd >= 0 => break fd,
            error => {
                let error = std::io::Error::from_raw_os_error(-error - 1);
                return Err(format!("installing the seccomp filter failed: {error}"));
            }
        }
    };
    let mut traps = Vec::new();
    loop {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd. On failure (EINTR) `revents` stays 0.
        unsafe { libc::poll(&mut poll, 1, 100) };
        if poll.revents & libc::POLLIN != 0 {
            // SAFETY: the kernel fills a zeroed seccomp_notif.
            let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            // SAFETY: `notif` is a valid, zeroed seccomp_notif.
            if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) } != 0 {
                // ENOENT: the syscall was interrupted before we took it.
                continue;
            }
            traps.push(Trap {
                nr: notif.data.nr,
                arch: notif.data.arch,
                reads: probe.reads.load(Ordering::SeqCst),
            });
            let response = libc::seccomp_notif_resp {
                id: notif.id,
                val: 0,
                error: 0,
                flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            };
            // SAFETY: `response` is a valid seccomp_notif_resp. ENOENT (the
            // syscall was interrupted meanwhile) needs no answer.
            unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
        } else if poll.revents & (libc::POLLHUP | libc::POLLERR) != 0 || done.load(Ordering::SeqCst)
        {
            break;
        }
    }
    // SAFETY: the listener is ours to close.
    unsafe { libc::close(fd) };
    Ok(traps)
}

fn syscall_name(nr: i32) -> String {
    let name = match i64::from(nr) {
        libc::SYS_read => "read",
        libc::SYS_write => "write",
        libc::SYS_close => "close",
        libc::SYS_mmap => "mmap",
        libc::SYS_mprotect => "mprotect",
        libc::SYS_munmap => "munmap",
        libc::SYS_brk => "brk",
        libc::SYS_rt_sigaction => "rt_sigaction",
        libc::SYS_rt_sigprocmask => "rt_sigprocmask",
        libc::SYS_sched_yield => "sched_yield",
        libc::SYS_madvise => "madvise",
        libc::SYS_nanosleep => "nanosleep",
        libc::SYS_getpid => "getpid",
        libc::SYS_exit => "exit",
        libc::SYS_sigaltstack => "sigaltstack",
        libc::SYS_gettid => "gettid",
        libc::SYS_futex => "futex",
        libc::SYS_clock_nanosleep => "clock_nanosleep",
        libc::SYS_clock_gettime => "clock_gettime",
        libc::SYS_exit_group => "exit_group",
        libc::SYS_set_robust_list => "set_robust_list",
        libc::SYS_rseq => "rseq",
        _ => return format!("#{nr}"),
    };
    name.to_owned()
}

#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "the seccomp filter is written for x86-64"
)]
fn servo_thread_makes_no_syscall_but_its_sleep() {
    let probe = Arc::new(Probe {
        reads: AtomicU64::new(0),
        allocations_first: AtomicUsize::new(0),
        allocations_last: AtomicUsize::new(0),
    });
    let device = Probed {
        device: SimulatedDevice::new(press_into_corner(), SimulatedClock::Wall),
        probe: Arc::clone(&probe),
    };
    let mut field: Option<SharedField> = None;
    // The tool also carries a field, and a deformable's node set joins the
    // corner (entry 1), so that the node patches' paths are audited too.
    let rig = rig_with_geometry(device, 1 << 12, |mut tool, mut environment| {
        if let EnvironmentGeometry::Field(shared) = &environment[0].geometry {
            field = Some(Arc::clone(shared));
        }
        tool.field = Some(Arc::new(SphereField {
            center: Point3::origin(),
            radius: 0.02,
        }));
        environment.push(EnvironmentObject {
            pose: Isometry3::identity(),
            geometry: EnvironmentGeometry::Nodes { capacity: 16 },
            friction_coefficient: 0.3,
        });
        (tool, environment)
    });
    let field = field.expect("cube_corner's environment is a field");
    let corner = rig.tick.cycle().scene().environment()[0].pose;
    // The corner as a body the servo moves between snapshots (heavy, held
    // by a stiff spring), so that the local models' paths are audited too.
    let servo_tick = rig.tick.with_local_models(1e-3, 0.01);
    let mut held = Matrix6::zeros();
    for k in 0..6 {
        held[(k, k)] = -1e6;
    }
    let corner_model = LocalBodyModel {
        body: 0,
        entries: [0, NO_ENTRY],
        pose: corner,
        velocity: Vector6::zeros(),
        mass: 1e3,
        inertia: Matrix3::identity() * 10.0,
        wrench: Vector6::zeros(),
        position_gradient: held,
        velocity_gradient: Matrix6::zeros(),
        free_motion: LocalBodyModel::FREE,
    };
    // Points about the tool's start, some inside its field, and their
    // patch's motion model, held by a stiff spring.
    let start = servo_tick.cycle().tool_pose().translation.vector;
    let patch = NodePatch {
        entry: 1,
        points: (0..16)
            .map(|k| Point3::from(start + Vector3::new(0.003 * k as f64 - 0.02, 0.0, -0.015)))
            .collect(),
        normals: vec![Vector3::z(); 16],
        ids: (0..16).collect(),
    };
    let mut patch_held = Matrix6::zeros();
    for k in 0..3 {
        patch_held[(k, k)] = -1e4;
    }
    let patch_model = LocalBodyModel {
        body: 1,
        entries: [1, NO_ENTRY],
        pose: Isometry3::identity(),
        mass: 0.01,
        inertia: Matrix3::identity(),
        position_gradient: patch_held,
        free_motion: LocalBodyModel::TRANSLATES,
        ..corner_model
    };
    let (mut physics, mut tool, mut telemetry) = (rig.physics, rig.tool, rig.telemetry);
    let mut control = rig.control;
    let parameters = *servo_tick.cycle().parameters();

    let listener = Arc::new(AtomicI32::new(PENDING));
    let done = Arc::new(AtomicBool::new(false));
    let supervisor = {
        let (listener, probe, done) = (listener.clone(), probe.clone(), done.clone());
        thread::spawn(move || supervise(&listener, &probe, &done))
    };
    let running = Arc::new(AtomicBool::new(true));
    let publisher = {
        let running = running.clone();
        thread::spawn(move || {
            let mut sequence = 0;
            while running.load(Ordering::Relaxed) {
                sequence += 1;
                physics.publish_with(|snapshot| {
                    snapshot.sequence = sequence;
                    snapshot.environment_poses[0] = corner;
                    // Every tick taken: nothing to replay.
                    snapshot.tool_tick = 1 << 62;
                    snapshot.local_models.clear();
                    snapshot.local_models.push(corner_model);
                    snapshot.local_models.push(patch_model);
                    // In place: the publisher allocates once per slot.
                    snapshot.patches.resize_with(1, NodePatch::default);
                    let slot = &mut snapshot.patches[0];
                    slot.entry = patch.entry;
                    slot.points.clone_from(&patch.points);
                    slot.normals.clone_from(&patch.normals);
                    slot.ids.clone_from(&patch.ids);
                });
            }
            sequence
        })
    };
    let drainer = {
        let running = running.clone();
        thread::spawn(move || {
            let (mut records, mut last, mut states, mut probes) = (0u64, None, 0u64, 0.0);
            loop {
                // Read before draining: once false, the servo has stopped.
                let more = running.load(Ordering::SeqCst);
                for record in telemetry.drain() {
                    records += 1;
                    last = Some(record);
                }
                states = states.max(tool.read().tick);
                probes += field.value(&Point3::new(0.001, 0.0, 0.001));
                if !more {
                    break;
                }
            }
            assert!(probes.is_finite());
            (records, last, states)
        })
    };

    let controller = {
        let running = running.clone();
        thread::spawn(move || {
            let models = [
                FrictionModel::StaticLp,
                FrictionModel::YamaneSprings { stiffness: 200.0 },
                parameters.friction,
            ];
            let (mut sent, mut applied, mut frames, mut contacts) = (0u64, 0u64, 0u64, 0usize);
            loop {
                // Read before the frame: once false, the servo has stopped.
                let more = running.load(Ordering::SeqCst);
                if let Some(update) = control.updates.collect() {
                    applied += u64::from(matches!(update.applied, Some(Ok(_))));
                }
                if !control.updates.in_flight() {
                    let k = sent as usize;
                    let p = RenderParameters {
                        friction: models[k / 2 % models.len()],
                        pyramid_sides: 4 + k % 5,
                        ..parameters
                    };
                    let mu = vec![0.3 + 0.01 * (k % 20) as f64; control.layout.environment_objects];
                    let rendering = RenderingUpdate::new(control.layout, p, mu).unwrap();
                    sent += 1;
                    let update = Box::new(ParameterUpdate::new(sent, rendering));
                    assert!(control.updates.send(update).is_ok());
                }
                let frame = control.scene_frames.read();
                frames = frames.max(frame.tick);
                contacts = contacts.max(frame.contacts.len());
                if !more {
                    break;
                }
            }
            (sent, applied, frames, contacts)
        })
    };

    let config = ServoConfig::default();
    let filter = listener.clone();
    let handle = ServoThread::spawn_with(config.clone(), servo_tick, move || {
        filter.store(install_filter(), Ordering::SeqCst);
    })
    .unwrap();
    let started = Instant::now();
    let mut polls = 0u64;
    while started.elapsed() < Duration::from_millis(1500) {
        assert!(!handle.is_finished());
        polls += 1;
        thread::sleep(Duration::from_micros(200));
    }
    let reads_at_stop = probe.reads.load(Ordering::SeqCst);
    let (stats, _tick) = handle.stop().unwrap();
    done.store(true, Ordering::SeqCst);
    let traps = supervisor
        .join()
        .unwrap()
        .unwrap_or_else(|error| panic!("{error}"));
    running.store(false, Ordering::SeqCst);
    let published = publisher.join().unwrap();
    let (records, last, states) = drainer.join().unwrap();
    let (sent, applied, frames, frame_contacts) = controller.join().unwrap();
    let total_reads = probe.reads.load(Ordering::SeqCst);

    // Where the servo was: before its first tick, between the first tick
    // and the last read before the stop request, in the shutdown ramp, or
    // past its last read (the end of the last tick, then thread exit).
    let phase = |reads: u64| match reads {
        0 => (0, "start-up"),
        r if r < reads_at_stop => (1, "running"),
        r if r < total_reads => (2, "stopping"),
        _ => (3, "exit"),
    };
    let mut seen: BTreeMap<((u8, &str), String), u64> = BTreeMap::new();
    for trap in &traps {
        let name = if trap.arch == AUDIT_ARCH_X86_64 {
            syscall_name(trap.nr)
        } else {
            format!("#{} (arch {:#x})", trap.nr, trap.arch)
        };
        *seen.entry((phase(trap.reads), name)).or_default() += 1;
    }
    println!(
        "{} ticks in {:?} (realtime {}), overruns {}, skipped {}; {reads_at_stop} reads at the stop request, {total_reads} in all",
        stats.ticks, stats.elapsed, stats.realtime, stats.overruns, stats.skipped
    );
    println!(
        "wake-up latency p50 {:?} p99 {:?} max {:?}; tick time p50 {:?} p99 {:?} max {:?}",
        stats.latency.quantile(0.5),
        stats.latency.quantile(0.99),
        stats.latency.max(),
        stats.tick_time.quantile(0.5),
        stats.tick_time.quantile(0.99),
        stats.tick_time.max()
    );
    println!("{published} snapshots published, {records} records drained, tool state up to tick {states}, {polls} handle polls");
    println!("{sent} parameter updates sent, {applied} applied; scene frames up to tick {frames}, up to {frame_contacts} contacts");
    println!("syscalls trapped (all but the deadline sleep):");
    for (((_, phase), name), count) in &seen {
        println!("  {phase:>8}  {name:<16} {count}");
    }

    // The filter and the counter watched the servo thread: its exit trapped,
    // and its start-up (the statistics' histograms) allocated.
    assert!(
        traps.iter().any(|t| i64::from(t.nr) == libc::SYS_exit),
        "{traps:?}"
    );
    let first = probe.allocations_first.load(Ordering::Relaxed);
    assert!(first > 0);
    let allocations = probe.allocations_last.load(Ordering::Relaxed) - first;
    let running_traps: Vec<_> = traps
        .iter()
        .filter(|t| phase(t.reads).1 == "running")
        .collect();
    assert!(
        running_traps.is_empty(),
        "syscalls between the first tick and the stop request: {running_traps:?}"
    );
    let futexes: Vec<_> = traps
        .iter()
        .filter(|t| i64::from(t.nr) == libc::SYS_futex && (1..total_reads).contains(&t.reads))
        .collect();
    assert!(futexes.is_empty(), "futex while the servo ran: {futexes:?}");
    assert_eq!(allocations, 0, "allocations on the servo thread");

    // Every period of the 1.5 s window is either ticked or skipped (which a
    // loaded machine may force), and most were ticked.
    let expected = stats.elapsed.as_secs_f64() * config.rate.hz();
    let scheduled = (stats.ticks + stats.skipped) as f64;
    assert!(
        (scheduled - expected).abs() <= 0.1 * expected,
        "{scheduled} periods, {expected:.0} expected"
    );
    assert!(scheduled >= 1350.0, "{scheduled} periods");
    assert!(stats.ticks >= 750, "{} ticks", stats.ticks);
    assert_eq!(stats.ticks, total_reads);
    // The contention was real: each side saw the other's updates.
    let last = last.expect("telemetry records");
    assert_eq!(records, stats.ticks);
    assert_eq!(states + 1, stats.ticks);
    assert!(published > stats.ticks, "{published} snapshots");
    assert!(last.physics_sequence > 1000, "{last:?}");
    assert!(last.contacts > 0);
    assert!(applied > 100, "{applied} updates applied");
    assert!(last.generation > 100, "{last:?}");
    assert_eq!(frames + 1, stats.ticks);
    assert!(frame_contacts > 0);
}
