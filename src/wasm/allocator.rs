//! The wasm module's global allocator: size-class free lists in front of std's allocator.
//!
//! The simulation allocates and frees many small blocks (strings, B-tree nodes, JSON values);
//! with std's dlmalloc alone, `malloc`/`free` took about a fifth of a simulation step in wasm.
//! Blocks of up to [`MAX_SMALL`] bytes (alignment up to [`GRAIN`]) come from per-size-class
//! free lists, refilled from chunks that std's allocator hands out and that are never given
//! back (freed small blocks are reused for their class). Everything else goes to std's
//! allocator unchanged. wasm32-unknown-unknown runs one thread, so no locking is needed.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// Size classes are multiples of this (also the alignment every small block has).
const GRAIN: usize = 16;
/// Largest size served from the free lists.
const MAX_SMALL: usize = 512;
const CLASSES: usize = MAX_SMALL / GRAIN;
/// Bytes asked from std's allocator at a time for carving small blocks.
const CHUNK: usize = 64 * 1024;

struct State {
    /// Head of each class's free list; a free block stores the next one in its first word.
    free: [*mut u8; CLASSES],
    /// Uncarved rest of the current chunk.
    next: *mut u8,
    end: *mut u8,
}

pub struct SizeClassAlloc(UnsafeCell<State>);

// SAFETY: wasm32-unknown-unknown without the atomics feature has a single thread.
unsafe impl Sync for SizeClassAlloc {}

impl SizeClassAlloc {
    pub const fn new() -> Self {
        SizeClassAlloc(UnsafeCell::new(State {
            free: [ptr::null_mut(); CLASSES],
            next: ptr::null_mut(),
            end: ptr::null_mut(),
        }))
    }
}

/// The class index of a small layout, or `None` for std's allocator.
#[inline]
fn class(layout: &Layout) -> Option<usize> {
    (layout.size() <= MAX_SMALL && layout.align() <= GRAIN && layout.size() != 0)
        .then(|| (layout.size() - 1) / GRAIN)
}

impl State {
    #[inline]
    unsafe fn alloc_small(&mut self, c: usize) -> *mut u8 {
        let head = self.free[c];
        if !head.is_null() {
            // SAFETY: a free block holds the next free block's address in its first word.
            self.free[c] = unsafe { *(head as *mut *mut u8) };
            return head;
        }
        let size = (c + 1) * GRAIN;
        if (self.end as usize) - (self.next as usize) < size {
            // SAFETY: CHUNK and GRAIN make a valid, non-zero layout.
            let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, GRAIN)) };
            if chunk.is_null() {
                return chunk;
            }
            self.next = chunk;
            self.end = chunk.wrapping_add(CHUNK);
        }
        let block = self.next;
        self.next = block.wrapping_add(size);
        block
    }

    #[inline]
    unsafe fn free_small(&mut self, p: *mut u8, c: usize) {
        // SAFETY: `p` is a block of class `c` (at least GRAIN bytes, GRAIN-aligned) that the
        // caller no longer uses.
        unsafe { *(p as *mut *mut u8) = self.free[c] };
        self.free[c] = p;
    }
}

// Not inlined: one copy of each path, called from std's allocation shims.
unsafe impl GlobalAlloc for SizeClassAlloc {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match class(&layout) {
            // SAFETY: single-threaded, and no allocator call re-enters this one.
            Some(c) => unsafe { (*self.0.get()).alloc_small(c) },
            None => unsafe { System.alloc(layout) },
        }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        match class(&layout) {
            Some(c) => unsafe { (*self.0.get()).free_small(p, c) },
            None => unsafe { System.dealloc(p, layout) },
        }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match class(&layout) {
            Some(c) => unsafe {
                let p = (*self.0.get()).alloc_small(c);
                if !p.is_null() {
                    ptr::write_bytes(p, 0, layout.size());
                }
                p
            },
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    #[inline(never)]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with `layout.align()` is a valid layout.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(&layout), class(&new_layout)) {
            (None, None) => unsafe { System.realloc(p, layout, new_size) },
            (Some(a), Some(b)) if a == b => p,
            _ => unsafe {
                let q = self.alloc(new_layout);
                if !q.is_null() {
                    ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                    self.dealloc(p, layout);
                }
                q
            },
        }
    }
}
