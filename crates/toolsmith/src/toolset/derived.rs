//! [`Derived`]: a tool list made from other shared lists, kept while they stay the same.

use std::any::Any;
use std::sync::{Arc, Mutex};

use crate::error::UserError;
use crate::toolset::ToolsetTool;

/// The sources and the list made from them.
struct Entry<D> {
    sources: Vec<Arc<[ToolsetTool<D>]>>,
    list: Arc<[ToolsetTool<D>]>,
}

/// The last list a wrapper toolset made from its inner toolsets' shared lists, reused as long as
/// they hand out the same lists (compared by identity: the entry holds them, so an address is
/// never reused while it is kept). A wrapper whose result depends on the run context (a
/// predicate selector, a filter function) does not use it.
///
/// Type-erased so that wrappers without a `D` parameter can hold one.
#[derive(Default)]
pub(crate) struct Derived {
    entry: Mutex<Option<Box<dyn Any + Send + Sync>>>,
}

impl Clone for Derived {
    /// A clone starts empty (it is a cache).
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Derived")
    }
}

impl Derived {
    /// The list made from `sources`: the kept one when they are the lists it was made from, else
    /// `derive()`'s, kept for the next call.
    pub(crate) fn get<D: Send + Sync + 'static>(
        &self,
        sources: &[Arc<[ToolsetTool<D>]>],
        derive: impl FnOnce() -> Result<Vec<ToolsetTool<D>>, UserError>,
    ) -> Result<Arc<[ToolsetTool<D>]>, UserError> {
        let mut entry = self.entry.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = entry.as_ref().and_then(|e| e.downcast_ref::<Entry<D>>())
            && e.sources.len() == sources.len()
            && e.sources.iter().zip(sources).all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return Ok(e.list.clone());
        }
        let list: Arc<[ToolsetTool<D>]> = derive()?.into();
        *entry = Some(Box::new(Entry { sources: sources.to_vec(), list: list.clone() }));
        Ok(list)
    }
}
