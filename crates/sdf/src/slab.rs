use std::any::Any;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable slice shared between threads, backed either by a `Vec` or by
/// a memory-mapped file. Field samples live in slabs so that a prepared file
/// is queried in place, without copying gigabytes into the heap.
pub struct Slab<T: 'static> {
    ptr: *const T,
    len: usize,
    _owner: Arc<dyn Any + Send + Sync>,
}

// SAFETY: a slab is never written through; the owner keeps the memory alive
// and is itself Send + Sync.
unsafe impl<T: Sync> Send for Slab<T> {}
unsafe impl<T: Sync> Sync for Slab<T> {}

impl<T: Send + Sync + 'static> Slab<T> {
    pub fn from_vec(values: Vec<T>) -> Self {
        let owner = Arc::new(values);
        Self {
            ptr: owner.as_ptr(),
            len: owner.len(),
            _owner: owner,
        }
    }
}

impl<T: 'static> Slab<T> {
    /// A view of `values`, kept alive by `owner`.
    ///
    /// # Safety
    /// `values` must point into memory owned by `owner` that stays valid and
    /// unmodified for as long as `owner` lives.
    pub unsafe fn from_owner(values: &[T], owner: Arc<dyn Any + Send + Sync>) -> Self {
        Self {
            ptr: values.as_ptr(),
            len: values.len(),
            _owner: owner,
        }
    }
}

impl<T> Deref for Slab<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr..ptr+len` is kept alive and unmodified by `_owner`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> Clone for Slab<T> {
    fn clone(&self) -> Self {
        Self {
            ptr: self.ptr,
            len: self.len,
            _owner: self._owner.clone(),
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Slab<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Slab(len {})", self.len)
    }
}
