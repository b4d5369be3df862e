//! The slim wasm build's allocator: power-of-two size classes, each a free list of blocks.
//!
//! The core allocates the same few shapes for every stream (its state, event and text buffers that
//! grow by doubling), so a freed block is soon wanted again at the same size: after the first streams,
//! allocation takes blocks from the lists and memory stays flat however many streams follow. In
//! exchange for at most 2x slack per block it is a fraction of a general allocator's code (it replaced
//! dlmalloc, whose malloc, free and realloc were 9% of the module).
//!
//! Allocation and free are O(1); growing a block is `GlobalAlloc`'s own realloc (a new block, a copy, a
//! free): a buffer that doubles always lands in the next class, so keeping a block that already holds
//! the new size was code for a case that hardly comes. New blocks come from the end of memory, grown by
//! whole 64 KiB pages; wasm cannot give memory back, so none is ever returned. A block is aligned to
//! [`ALIGN`]; a larger alignment, or a size over 2 GiB, gets null (the caller's allocation error, a trap
//! in this build).

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::cell::UnsafeCell;
use core::ptr::null_mut;

/// Every block's alignment: enough for every type the core allocates (f64, u64).
const ALIGN: usize = 8;
const PAGE: usize = 65_536;
/// Class `k` holds blocks of `2^k` bytes; the smallest is [`ALIGN`], which also fits a list link.
const CLASSES: usize = 32;

pub struct SizeClasses(UnsafeCell<Heap>);

struct Heap {
    /// Head of each class's free list (0: empty); a free block's first word links to the next.
    free: [usize; CLASSES],
    /// Unused memory between `next` and `end`, taken by new blocks.
    next: usize,
    end: usize,
}

impl SizeClasses {
    pub const fn new() -> Self {
        SizeClasses(UnsafeCell::new(Heap { free: [0; CLASSES], next: 0, end: 0 }))
    }
}

// SAFETY: the wasm build is single-threaded (no atomics target feature), so there is no other thread.
unsafe impl Sync for SizeClasses {}

/// The class whose blocks hold `size` bytes, if any.
fn class_of(size: usize) -> Option<usize> {
    let class = size.max(ALIGN).checked_next_power_of_two()?.trailing_zeros() as usize;
    (class < CLASSES - 1).then_some(class)
}

unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let heap = &mut *self.0.get();
        let Some(class) = class_of(layout.size()).filter(|_| layout.align() <= ALIGN) else { return null_mut() };
        let head = heap.free[class];
        if head != 0 {
            heap.free[class] = *(head as *const usize);
            return head as *mut u8;
        }
        let size = 1 << class;
        if heap.end - heap.next < size {
            let pages = size.div_ceil(PAGE);
            let previous = wasm32::memory_grow(0, pages);
            if previous == usize::MAX {
                return null_mut();
            }
            // Memory grows in place: continue the current run unless this is the first growth.
            if heap.end != previous * PAGE {
                heap.next = previous * PAGE;
            }
            heap.end = (previous + pages) * PAGE;
        }
        let block = heap.next;
        heap.next += size;
        block as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let heap = &mut *self.0.get();
        // Every block given out had a class, so `class_of` succeeds here.
        let class = class_of(layout.size()).unwrap_or(0);
        *(ptr as *mut usize) = heap.free[class];
        heap.free[class] = ptr as usize;
    }
}
