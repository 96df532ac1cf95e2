//! The server's memory allocator: the system's, except that a huge allocation reserves address
//! space only (`MAP_NORESERVE`) instead of being refused.
//!
//! Why: the kafka-protocol crate's decoders size a `Vec` by the element count a request claims
//! before reading any element. A 19-byte request claiming two billion topics asks for a
//! hundred-odd gigabytes at once; the system allocator refuses, and Rust aborts the process,
//! so anyone who can reach the port could stop the server. Reserved without backing, the same
//! allocation succeeds, the decoder runs out of bytes at the first element and fails cleanly,
//! and the mapping is returned untouched. Allocations the server really fills are far below the
//! threshold (a request is at most 100 MiB).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::ptr;

use rustix::mm::{MapFlags, ProtFlags, mmap_anonymous, munmap};

/// Allocations of this size or more are reserved, not committed.
const HUGE: usize = 1 << 30;
/// Alignment an anonymous mapping always has (a page).
const PAGE: usize = 4096;

/// The system allocator, with huge allocations as `MAP_NORESERVE` mappings.
pub struct ReserveHuge;

fn is_huge(layout: &Layout) -> bool {
    layout.size() >= HUGE && layout.align() <= PAGE
}

// SAFETY: small layouts go to `System` unchanged; huge ones are page-aligned anonymous
// mappings of at least `layout.size()` bytes (zero-filled, as `alloc_zeroed` requires), freed
// by `munmap` of the same length, and never handed to `System`.
unsafe impl GlobalAlloc for ReserveHuge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_huge(&layout) {
            reserve(layout.size())
        } else {
            // SAFETY: the caller's contract for `alloc` is passed on.
            unsafe { System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_huge(&layout) {
            reserve(layout.size())
        } else {
            // SAFETY: as in `alloc`.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_huge(&layout) {
            // SAFETY: `ptr` came from `reserve(layout.size())`. A failed unmap leaks the
            // reservation, which is all that can be done here.
            let _ = unsafe { munmap(ptr.cast::<c_void>(), layout.size()) };
        } else {
            // SAFETY: `ptr` came from `System` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a valid layout for `new_size`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !is_huge(&layout) && !is_huge(&new_layout) {
            // SAFETY: both sides are the system allocator's.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: `new_layout` is valid (above); the old block is `layout.size()` bytes.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

/// Reserves `size` bytes of zero-filled address space; null when even that fails.
fn reserve(size: usize) -> *mut u8 {
    // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
    let mapped = unsafe {
        mmap_anonymous(
            ptr::null_mut(),
            size,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::PRIVATE | MapFlags::NORESERVE,
        )
    };
    mapped.map_or(ptr::null_mut(), |p| p.cast::<u8>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_allocation_is_reserved_then_returned() {
        // 512 GiB: far beyond this machine's memory, as a hostile element count asks.
        let layout = Layout::from_size_align(512 << 30, 8).unwrap();
        // SAFETY: a non-zero layout; the block is written at its start only, then freed.
        unsafe {
            let p = ReserveHuge.alloc(layout);
            assert!(!p.is_null());
            p.write(7);
            let q = ReserveHuge.realloc(p, layout, 1 << 20);
            assert_eq!(q.read(), 7);
            ReserveHuge.dealloc(q, Layout::from_size_align(1 << 20, 8).unwrap());
        }
    }
}
