//! Kafka response frames as the remote client decodes them, and a Fetch response's record
//! batches as the consumer walks them (`kafkit::fuzzing::response_frame`).
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr::null_mut;

/// kafka-protocol 0.18 sizes a `Vec` by the array count read off the wire before it decodes a
/// single element (known upstream: kafka-protocol-rs pull requests 152, 161 and 200), so a
/// frame of a dozen bytes can ask for hundreds of GiB, and the failed allocation aborts the
/// process. kafkit cannot change that decoder; this target maps allocations that large
/// without reserving memory, so that the fuzzer gets past the known bug to what follows. The
/// pages a decode really touches are bounded by the frame's size.
struct NoReserveForHuge;

/// Allocations from this size up are mapped; smaller ones go to the system allocator (which
/// the address sanitizer checks).
const HUGE: usize = 1 << 30;

unsafe impl GlobalAlloc for NoReserveForHuge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() < HUGE {
            return unsafe { System.alloc(layout) };
        }
        map(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() < HUGE {
            return unsafe { System.alloc_zeroed(layout) };
        }
        // Anonymous mappings are zeroed already; writing zeros would touch every page.
        map(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() < HUGE {
            unsafe { System.dealloc(ptr, layout) }
        } else {
            unsafe { libc::munmap(ptr.cast(), layout.size()) };
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.size() < HUGE && new_size < HUGE {
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return null_mut();
        };
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

/// A private anonymous mapping without swap reservation (page aligned, which covers any
/// alignment a Rust type asks for below a page).
fn map(layout: Layout) -> *mut u8 {
    if layout.align() > 4096 {
        return null_mut();
    }
    let p = unsafe {
        libc::mmap(
            null_mut(),
            layout.size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        null_mut()
    } else {
        p.cast()
    }
}

#[global_allocator]
static ALLOCATOR: NoReserveForHuge = NoReserveForHuge;

libfuzzer_sys::fuzz_target!(|data: &[u8]| kafkit::fuzzing::response_frame(data));
