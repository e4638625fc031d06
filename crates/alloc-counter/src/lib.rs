//! A global allocator that counts the current thread's allocations, for
//! tests proving that a real-time path allocates nothing after start-up.
//!
//! A test binary installs it and measures a closure:
//!
//! ```ignore
//! use haptic_alloc_counter::{allocations_during, CountingAllocator};
//!
//! #[global_allocator]
//! static GLOBAL: CountingAllocator = CountingAllocator;
//!
//! assert_eq!(allocations_during(|| servo_tick()), 0);
//! ```
//!
//! Counts are per thread, so the test harness's own threads don't disturb
//! them. Reallocations count as allocations; frees don't.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting each thread's allocations.
pub struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down may still allocate.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations made on this thread so far (with [`CountingAllocator`]
/// installed as the global allocator; zero otherwise).
pub fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made on this thread while `f` runs.
pub fn allocations_during(f: impl FnOnce()) -> usize {
    let before = allocations();
    f();
    allocations() - before
}
